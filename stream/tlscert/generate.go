package tlscert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/netip"
	"os"
	"time"
)

// Generate makes a self-signed server certificate and its key, as
// [Config].Auto does: an ECDSA P-256 key, hosts as its subject alternative
// names (IP addresses as IP addresses, the rest as DNS names; the first
// name, or the first address, is the common name), valid from an hour ago
// for validity. It returns them PEM-encoded: the certificate ("CERTIFICATE")
// and the key (PKCS #8, "PRIVATE KEY").
func Generate(hosts []string, validity time.Duration) (certPEM, keyPEM []byte, err error) {
	if len(hosts) == 0 {
		return nil, nil, fmt.Errorf("%w: a certificate needs at least one host name or address", ErrInvalidConfig)
	}
	if validity <= 0 {
		return nil, nil, fmt.Errorf("%w: validity %s must be positive", ErrInvalidConfig, validity)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("tlscert: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, nil, fmt.Errorf("tlscert: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(validity),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
	}
	for _, h := range hosts {
		if a, err := netip.ParseAddr(h); err == nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, net.IP(a.Unmap().AsSlice()))
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	tmpl.Subject = pkix.Name{CommonName: hosts[0]}
	if len(tmpl.DNSNames) > 0 {
		tmpl.Subject.CommonName = tmpl.DNSNames[0]
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, fmt.Errorf("tlscert: %w", err)
	}
	kb, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, fmt.Errorf("tlscert: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kb}), nil
}

// HostNames returns the names and addresses of this host that [Config].Auto
// writes into a certificate when Config.Hosts is nil: the host name (if
// the system has one), "localhost", the addresses of the network
// interfaces except link-local ones, 127.0.0.1 and ::1, each once.
func HostNames() []string {
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	if h, err := os.Hostname(); err == nil {
		add(h)
	}
	add("localhost")
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			pn, ok := a.(*net.IPNet)
			if !ok {
				continue
			}
			ip, ok := netip.AddrFromSlice(pn.IP)
			if !ok {
				continue
			}
			ip = ip.Unmap()
			if ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() || ip.IsUnspecified() {
				continue
			}
			add(ip.String())
		}
	}
	add("127.0.0.1")
	add("::1")
	return out
}

// mustDER returns the DER of the first PEM block of a certificate this
// package encoded.
func mustDER(certPEM []byte) []byte {
	b, _ := pem.Decode(certPEM)
	if b == nil {
		panic("tlscert: no PEM block in a certificate it made")
	}
	return b.Bytes
}
