package forward_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/relaykit/relaykit/internal/testtool"

	"github.com/stretchr/testify/require"
)

const syslogNGBin = "/usr/sbin/syslog-ng"

// syslogNG is a syslog-ng receiver run by a test on 127.0.0.1 with its own
// configuration, listening for RFC 5424 over TCP (octet counting), TLS and
// UDP, and for RFC 3164 with LF framing over TCP, each source writing to
// its own file.
type syslogNG struct {
	t                                  *testing.T
	bin, dir                           string
	tcpPort, tlsPort, udpPort, bsdPort int
	caPool                             *x509.CertPool
	cmd                                *exec.Cmd
	exited                             chan struct{}
}

// The file template: the parsed header fields and the message, so a test
// can check every part arrived intact.
const syslogNGTemplate = `${PRI} ${HOST} ${PROGRAM} ${PID} ${MSGID} ${SDATA} ${MSG}\n`

func startSyslogNG(t *testing.T) *syslogNG {
	t.Helper()
	s := &syslogNG{t: t, dir: t.TempDir()}
	s.bin = testtool.Need(t, "syslog-ng", "apt-get install syslog-ng-core", syslogNGBin)
	s.tcpPort, s.tlsPort, s.bsdPort = freeTCPPort(t), freeTCPPort(t), freeTCPPort(t)
	s.udpPort = freeUDPPort(t)
	certFile, keyFile := filepath.Join(s.dir, "cert.pem"), filepath.Join(s.dir, "key.pem")
	s.caPool = writeTestCert(t, certFile, keyFile)
	conf := fmt.Sprintf(`@version: 3.38
options { keep-hostname(yes); chain-hostnames(no); log-msg-size(70000); stats-freq(0); flush-lines(0); log-fifo-size(100000); };
source s_tcp { syslog(ip("127.0.0.1") port(%d) transport("tcp") log-iw-size(100000)); };
source s_tls { syslog(ip("127.0.0.1") port(%d) transport("tls") log-iw-size(100000)
  tls(key-file("%s") cert-file("%s") peer-verify(optional-untrusted))); };
source s_udp { syslog(ip("127.0.0.1") port(%d) transport("udp") so-rcvbuf(8388608)); };
source s_bsd { network(ip("127.0.0.1") port(%d) transport("tcp") log-iw-size(100000)); };
destination d_tcp { file("%s/tcp.log" template("%s")); };
destination d_tls { file("%s/tls.log" template("%s")); };
destination d_udp { file("%s/udp.log" template("%s")); };
destination d_bsd { file("%s/bsd.log" template("%s")); };
log { source(s_tcp); destination(d_tcp); };
log { source(s_tls); destination(d_tls); };
log { source(s_udp); destination(d_udp); };
log { source(s_bsd); destination(d_bsd); };
`, s.tcpPort, s.tlsPort, keyFile, certFile, s.udpPort, s.bsdPort,
		s.dir, syslogNGTemplate, s.dir, syslogNGTemplate, s.dir, syslogNGTemplate, s.dir, syslogNGTemplate)
	require.NoError(t, os.WriteFile(filepath.Join(s.dir, "syslog-ng.conf"), []byte(conf), 0o600))
	s.start()
	t.Cleanup(s.stop)
	return s
}

// start runs syslog-ng and waits until its TCP and TLS ports accept
// connections (all sources are opened together, so UDP is bound too).
func (s *syslogNG) start() {
	t := s.t
	t.Helper()
	cmd := exec.Command(s.bin, "-F",
		"-f", filepath.Join(s.dir, "syslog-ng.conf"),
		"--persist-file="+filepath.Join(s.dir, "persist"),
		"--pidfile="+filepath.Join(s.dir, "pid"),
		"--control="+filepath.Join(s.dir, "ctl"),
		"--no-caps")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	s.cmd, s.exited = cmd, make(chan struct{})
	exited := s.exited
	go func() { _ = cmd.Wait(); close(exited) }()
	for _, port := range []int{s.tcpPort, s.tlsPort, s.bsdPort} {
		deadline := time.Now().Add(10 * time.Second)
		for {
			c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
			if err == nil {
				_ = c.Close()
				break
			}
			select {
			case <-exited:
				t.Fatalf("syslog-ng exited: %s", out.String())
			case <-time.After(20 * time.Millisecond): // poll interval while it starts
			}
			if time.Now().After(deadline) {
				t.Fatalf("syslog-ng did not listen on %d: %s", port, out.String())
			}
		}
	}
}

// stop terminates syslog-ng (it flushes its files on SIGTERM) and waits for
// it to exit. It is idempotent.
func (s *syslogNG) stop() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
	s.cmd = nil
}

// waitLines waits until file holds n lines and returns them.
func (s *syslogNG) waitLines(file string, n int) []string {
	s.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	var lines []string
	for {
		b, _ := os.ReadFile(filepath.Join(s.dir, file))
		lines = strings.Split(string(b), "\n")
		lines = lines[:len(lines)-1] // after the last newline
		if len(lines) >= n || time.Now().After(deadline) {
			return lines
		}
		time.Sleep(20 * time.Millisecond) // poll interval for the file
	}
}

func freeTCPPort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func freeUDPPort(t *testing.T) int {
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port
}

// writeTestCert writes a self-signed ECDSA certificate for 127.0.0.1 and
// its key as PEM files and returns a pool that trusts it.
func writeTestCert(t *testing.T, certFile, keyFile string) *x509.CertPool {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "relaykit test receiver"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600))
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return pool
}

// clientCert returns a fresh self-signed client certificate.
func clientCert(t *testing.T) tls.Certificate {
	t.Helper()
	dir := t.TempDir()
	writeTestCert(t, filepath.Join(dir, "c.pem"), filepath.Join(dir, "k.pem"))
	c, err := tls.LoadX509KeyPair(filepath.Join(dir, "c.pem"), filepath.Join(dir, "k.pem"))
	require.NoError(t, err)
	return c
}
