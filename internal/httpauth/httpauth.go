// Package httpauth checks the token an operator's HTTP request presents,
// the same way for every handler of relaykit that takes one (tap,
// sources): as "Authorization: Bearer <token>", or as the password of
// HTTP Basic credentials (any user name), which a browser asks for and
// then sends by itself.
package httpauth

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"
)

// Token is a configured token. The zero Token (from an empty string)
// authorizes every request.
type Token struct {
	hash [sha256.Size]byte
	set  bool
}

// New returns the Token tok; empty means no authentication.
func New(tok string) Token {
	if tok == "" {
		return Token{}
	}
	return Token{hash: sha256.Sum256([]byte(tok)), set: true}
}

// Authorized reports whether r presents the token, as a bearer token or as
// a Basic password. Comparing digests keeps the time independent of the
// token's length and of where the presented one differs.
func (t Token) Authorized(r *http.Request) bool {
	if !t.set {
		return true
	}
	var tok string
	if _, pass, ok := r.BasicAuth(); ok {
		tok = pass
	} else {
		scheme, v, ok := strings.Cut(r.Header.Get("Authorization"), " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") {
			return false
		}
		tok = strings.TrimSpace(v)
	}
	got := sha256.Sum256([]byte(tok))
	return subtle.ConstantTimeCompare(got[:], t.hash[:]) == 1
}

// Challenge sets the WWW-Authenticate headers of a 401 answer: both
// schemes, so that a browser asks for Basic credentials and a program
// knows to send a bearer token.
func Challenge(w http.ResponseWriter, realm string) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="`+realm+`"`)
	w.Header().Add("WWW-Authenticate", `Basic realm="`+realm+`", charset="UTF-8"`)
}
