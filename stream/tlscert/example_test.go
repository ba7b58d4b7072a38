package tlscert_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/relaykit/relaykit/stream"
	"github.com/relaykit/relaykit/stream/tlscert"
)

// With Auto, the first start makes a self-signed certificate in a state
// directory and later starts reuse it: its fingerprint, which senders pin,
// stays the same. The listener takes it through TLSConfig.
func Example_auto() {
	state, err := os.MkdirTemp("", "relay-state")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(state)
	cfg := tlscert.Config{Auto: true, Dir: filepath.Join(state, "tls")}
	first, err := tlscert.New(cfg)
	if err != nil {
		panic(err)
	}
	pin := first.Fingerprint() // log it, show it on the status page

	// A restart: a new Store on the same directory.
	certs, err := tlscert.New(cfg)
	if err != nil {
		panic(err)
	}
	fmt.Println("same fingerprint after a restart:", certs.Fingerprint() == pin)

	ctx, cancel := context.WithCancel(context.Background())
	frames := make(chan string)
	done := make(chan error)
	ln, err := stream.New(stream.Config{Name: "syslog-tls", Address: "127.0.0.1:0", TLS: certs.TLSConfig(nil), Handler: func(c *stream.Conn) {
		f := stream.NewFramer(c, stream.FramerConfig{})
		if frame, _, err := f.Next(); err == nil {
			frames <- string(frame)
		}
	}})
	if err != nil {
		panic(err)
	}
	go func() { done <- ln.Serve(ctx) }()
	// A sender that pins the fingerprint.
	c, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{
		InsecureSkipVerify: true, //nolint:gosec // verified by its fingerprint
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			if tlscert.FingerprintOf(raw[0]) != pin {
				return errors.New("not the pinned certificate")
			}
			return nil
		},
	})
	if err != nil {
		panic(err)
	}
	fmt.Fprint(c, "<13>hello\n")
	fmt.Printf("received %q\n", <-frames)
	c.Close()
	cancel()
	<-done
	// Output:
	// same fingerprint after a restart: true
	// received "<13>hello"
}

// Configured files are re-read on demand (call Reload on SIGHUP) and when
// a handshake finds them changed; a bad new pair keeps the certificate in
// use, with the error reported.
func ExampleStore_Reload() {
	dir, err := os.MkdirTemp("", "relay-tls")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	certFile, keyFile := filepath.Join(dir, "relay.crt"), filepath.Join(dir, "relay.key")
	write := func(name string, b []byte) {
		// Renamed into place, as certbot and Kubernetes do.
		if err := os.WriteFile(name+".new", b, 0o600); err != nil {
			panic(err)
		}
		if err := os.Rename(name+".new", name); err != nil {
			panic(err)
		}
	}
	oldCert, oldKey, _ := tlscert.Generate([]string{"relay.example"}, 90*24*time.Hour)
	newCert, newKey, _ := tlscert.Generate([]string{"relay.example"}, 90*24*time.Hour)
	write(certFile, oldCert)
	write(keyFile, oldKey)
	certs, err := tlscert.New(tlscert.Config{CertFile: certFile, KeyFile: keyFile})
	if err != nil {
		panic(err)
	}
	cfg := certs.TLSConfig(&tls.Config{MinVersion: tls.VersionTLS12}) // stream.Config.TLS
	first := certs.Fingerprint()

	write(certFile, newCert) // without its key yet: not a pair
	fmt.Println("reload:", certs.Reload() != nil, "kept:", certs.Fingerprint() == first)
	write(keyFile, newKey)
	fmt.Println("reload:", certs.Reload(), "changed:", certs.Fingerprint() != first)
	cert, _ := cfg.GetCertificate(&tls.ClientHelloInfo{}) // what the next handshake gets
	fmt.Println("served:", tlscert.FingerprintOf(cert.Certificate[0]) == certs.Fingerprint())
	fmt.Printf("%+v\n", certs.Stats())
	// Output:
	// reload: true kept: true
	// reload: <nil> changed: true
	// served: true
	// {Reloads:1 ReloadErrors:1}
}
