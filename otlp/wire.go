package otlp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Protobuf wire reading for the direct decoder (protodec.go). These
// follow pdata's own reader (pdata internal/proto) to the letter rather
// than google.golang.org/protobuf/encoding/protowire, because the direct
// decoder must accept and refuse exactly the requests pdata does: pdata
// takes a tag's field number as int32(tag>>3) without protowire's range
// check, accepts any tenth varint byte, and refuses a known field sent
// with another wire type, where protowire-based decoders differ.

type wireType int8

const (
	wireVarint     wireType = 0
	wireI64        wireType = 1
	wireLen        wireType = 2
	wireStartGroup wireType = 3
	wireEndGroup   wireType = 4
	wireI32        wireType = 5
)

var (
	errWireLength   = errors.New("proto: negative length found during unmarshaling")
	errWireOverflow = errors.New("proto: integer overflow")
	errWireEndGroup = errors.New("proto: unexpected end of group")
	errTraceIDSize  = errors.New("invalid length for trace id")
	errSpanIDSize   = errors.New("invalid length for span id")
)

// wrongWireType is the error for a known field sent with another wire type.
func wrongWireType(field string, wt wireType) error {
	return fmt.Errorf("proto: wrong wireType = %d for field %s", wt, field)
}

func consumeVarint(b []byte, pos int) (uint64, int, error) {
	var num uint64
	for shift := uint(0); ; shift += 7 {
		if shift >= 64 {
			return 0, 0, errWireOverflow
		}
		if pos >= len(b) {
			return 0, 0, io.ErrUnexpectedEOF
		}
		c := b[pos]
		pos++
		num |= uint64(c&0x7f) << shift
		if c < 0x80 {
			break
		}
	}
	return num, pos, nil
}

func consumeTag(b []byte, pos int) (int32, wireType, int, error) {
	// One-byte tags (fields 1-15) are nearly all of them.
	if pos < len(b) && b[pos] < 0x80 && b[pos]>>3 != 0 {
		return int32(b[pos] >> 3), wireType(b[pos] & 7), pos + 1, nil
	}
	tag, pos, err := consumeVarint(b, pos)
	if err != nil {
		return 0, 0, 0, err
	}
	field := int32(tag >> 3)
	if field <= 0 {
		return 0, 0, 0, fmt.Errorf("proto: illegal field=%d (tag=%d, pos=%d)", field, tag, pos)
	}
	return field, wireType(tag & 7), pos, nil
}

// consumeLen returns the length of a length-delimited field and the
// position after its content.
func consumeLen(b []byte, pos int) (int, int, error) {
	num, pos, err := consumeVarint(b, pos)
	if err != nil {
		return 0, 0, err
	}
	n := int(num)
	if n < 0 {
		return 0, 0, errWireLength
	}
	pos += n
	if pos < 0 || pos > len(b) {
		return 0, 0, io.ErrUnexpectedEOF
	}
	return n, pos, nil
}

// consumeBytes returns the content of a length-delimited field.
func consumeBytes(b []byte, pos int) ([]byte, int, error) {
	n, pos, err := consumeLen(b, pos)
	if err != nil {
		return nil, 0, err
	}
	return b[pos-n : pos], pos, nil
}

func consumeI64(b []byte, pos int) (uint64, int, error) {
	pos += 8
	if pos < 0 || pos > len(b) {
		return 0, 0, io.ErrUnexpectedEOF
	}
	return binary.LittleEndian.Uint64(b[pos-8:]), pos, nil
}

func consumeI32(b []byte, pos int) (uint32, int, error) {
	pos += 4
	if pos < 0 || pos > len(b) {
		return 0, 0, io.ErrUnexpectedEOF
	}
	return binary.LittleEndian.Uint32(b[pos-4:]), pos, nil
}

// consumeUnknown skips a field the decoder does not read, as pdata does
// (groups included, with pdata's quirks).
func consumeUnknown(b []byte, pos int, wt wireType) (int, error) {
	var err error
	depth := 0
	for pos < len(b) {
		switch wt {
		case wireVarint:
			_, pos, err = consumeVarint(b, pos)
			return pos, err
		case wireI64:
			_, pos, err = consumeI64(b, pos)
			return pos, err
		case wireLen:
			_, pos, err = consumeLen(b, pos)
			return pos, err
		case wireStartGroup:
			depth++
		case wireEndGroup:
			if depth == 0 {
				return 0, errWireEndGroup
			}
			depth--
		case wireI32:
			_, pos, err = consumeI32(b, pos)
			return pos, err
		default:
			return 0, fmt.Errorf("proto: illegal wireType %d", wt)
		}
		if depth == 0 {
			return pos, nil
		}
		_, wt, pos, err = consumeTag(b, pos)
		if err != nil {
			return 0, err
		}
	}
	return 0, io.ErrUnexpectedEOF
}
