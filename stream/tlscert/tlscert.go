package tlscert

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// ErrInvalidConfig is wrapped by the error [New] returns for a bad
// [Config].
var ErrInvalidConfig = errors.New("tlscert: invalid config")

// File names of the certificate and key [Config].Auto keeps in its
// directory.
const (
	AutoCertFile = "cert.pem"
	AutoKeyFile  = "key.pem"
)

// DefaultValidity is how long a certificate [Config].Auto makes is valid.
const DefaultValidity = 10 * 365 * 24 * time.Hour

// Config configures a [Store]: either CertFile and KeyFile, or Auto and
// Dir.
type Config struct {
	// CertFile is a PEM file holding the certificate chain, the server's
	// certificate first; KeyFile the PEM file of its private key (PKCS #1,
	// PKCS #8 or SEC 1). Both are read by New, again by [Store.Reload],
	// and when a handshake finds either changed on disk.
	CertFile, KeyFile string
	// Auto makes a self-signed certificate (ECDSA P-256) when Dir holds
	// none, or only an expired one, and keeps it in Dir for later starts.
	// It excludes CertFile and KeyFile.
	Auto bool
	// Dir is the state directory where Auto keeps its certificate
	// (AutoCertFile) and key (AutoKeyFile, mode 0600). It is created (mode
	// 0700) if missing. Required with Auto. One process at a time may
	// use a directory.
	Dir string
	// Hosts are the DNS names and IP addresses Auto writes into a
	// certificate it makes (the first name is also its common name). Nil
	// means the host's: its host name, "localhost", the addresses of its
	// network interfaces (link-local ones aside), 127.0.0.1 and ::1.
	Hosts []string
	// Validity is how long a certificate Auto makes is valid, from an hour
	// before it is made (for clocks behind). Zero means DefaultValidity
	// (10 years): senders pin its fingerprint, which a new certificate
	// changes.
	Validity time.Duration
	// Logger receives a record when Auto makes a certificate, and when a
	// reload takes a new certificate or keeps the one in use after an
	// error (one record per change of the files). Nil means no logging.
	Logger *slog.Logger
}

// Stats counts a Store's reloads.
type Stats struct {
	// Reloads counts the certificates taken after the first one: by
	// Reload, or at a handshake that found the files changed.
	Reloads int64
	// ReloadErrors counts the reloads that kept the certificate in use
	// because the files could not be read or did not make a valid pair.
	ReloadErrors int64
}

// Fingerprint is the SHA-256 digest of a certificate's DER encoding: what
// a sender that pins the certificate compares.
type Fingerprint [sha256.Size]byte

// FingerprintOf returns the fingerprint of a DER-encoded certificate.
func FingerprintOf(der []byte) Fingerprint { return sha256.Sum256(der) }

// String returns the fingerprint as upper-case hexadecimal pairs joined by
// colons ("AB:CD:..."), as openssl x509 -fingerprint -sha256 prints it.
func (f Fingerprint) String() string {
	h := strings.ToUpper(hex.EncodeToString(f[:]))
	var b strings.Builder
	b.Grow(len(f) * 3)
	for i := 0; i < len(h); i += 2 {
		if i > 0 {
			b.WriteByte(':')
		}
		b.WriteString(h[i : i+2])
	}
	return b.String()
}

// Store holds a listener's server certificate and replaces it when its
// files change; see the package documentation. It is safe for concurrent
// use by multiple goroutines.
type Store struct {
	certFile, keyFile string
	log               *slog.Logger

	cur atomic.Pointer[loaded]

	mu        sync.Mutex // serialises reloads
	seen      fileState  // the files as the last load attempt found them; guarded by mu
	lastErr   atomic.Pointer[error]
	reloads   atomic.Int64
	reloadErr atomic.Int64
}

// loaded is a certificate in use.
type loaded struct {
	cert *tls.Certificate // Leaf set
	fp   Fingerprint
}

// fileState is what the check of the files compares.
type fileState struct {
	cert, key os.FileInfo
	err       string // the stat error, if any
}

func (a fileState) same(b fileState) bool {
	return a.err == b.err && sameFile(a.cert, b.cert) && sameFile(a.key, b.key)
}

func sameFile(a, b os.FileInfo) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// New returns a Store serving the certificate of cfg: read from CertFile
// and KeyFile, or with Auto read from Dir or made there. It returns an
// error wrapping [ErrInvalidConfig] for a bad Config, and the error of
// reading, making or writing the files otherwise.
func New(cfg Config) (*Store, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	switch {
	case cfg.Auto && (cfg.CertFile != "" || cfg.KeyFile != ""):
		return nil, fmt.Errorf("%w: Auto excludes CertFile and KeyFile", ErrInvalidConfig)
	case cfg.Auto && cfg.Dir == "":
		return nil, fmt.Errorf("%w: Auto needs Dir, the directory that keeps its certificate", ErrInvalidConfig)
	case !cfg.Auto && (cfg.CertFile == "" || cfg.KeyFile == ""):
		return nil, fmt.Errorf("%w: CertFile and KeyFile, or Auto and Dir, are required", ErrInvalidConfig)
	case cfg.Validity < 0:
		return nil, fmt.Errorf("%w: Validity %s must not be negative", ErrInvalidConfig, cfg.Validity)
	}
	s := &Store{certFile: cfg.CertFile, keyFile: cfg.KeyFile, log: cfg.Logger}
	if cfg.Auto {
		s.certFile, s.keyFile = filepath.Join(cfg.Dir, AutoCertFile), filepath.Join(cfg.Dir, AutoKeyFile)
		if err := s.auto(cfg); err != nil {
			return nil, err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stat()
	l, err := s.read()
	if err != nil {
		return nil, err
	}
	s.seen = st
	s.cur.Store(l)
	return s, nil
}

// auto makes a certificate in cfg.Dir unless a valid one is there.
func (s *Store) auto(cfg Config) error {
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return fmt.Errorf("tlscert: %w", err)
	}
	var old *loaded
	_, cerr := os.Stat(s.certFile)
	_, kerr := os.Stat(s.keyFile)
	if cerr == nil && kerr == nil {
		l, err := s.read()
		if err != nil {
			return fmt.Errorf("%w (remove both files to make a new certificate)", err)
		}
		if time.Now().Before(l.cert.Leaf.NotAfter) {
			return nil
		}
		old = l
	} else if !errors.Is(cerr, os.ErrNotExist) && cerr != nil {
		return fmt.Errorf("tlscert: %w", cerr)
	}
	hosts := cfg.Hosts
	if hosts == nil {
		hosts = HostNames()
	}
	validity := cfg.Validity
	if validity == 0 {
		validity = DefaultValidity
	}
	certPEM, keyPEM, err := Generate(hosts, validity)
	if err != nil {
		return err
	}
	// The key first: a crash between the two leaves a key without its
	// certificate, and the next start makes a new pair.
	if err := writeFile(s.keyFile, keyPEM, 0o600); err != nil {
		return err
	}
	if err := writeFile(s.certFile, certPEM, 0o644); err != nil {
		return err
	}
	fp := FingerprintOf(mustDER(certPEM))
	if old != nil {
		s.log.Warn("TLS: the self-signed certificate had expired; made a new one: senders that pinned the old fingerprint must pin the new one",
			"cert_file", s.certFile, "expired", old.cert.Leaf.NotAfter, "old_sha256", old.fp.String(), "sha256", fp.String())
	} else {
		s.log.Info("TLS: made a self-signed certificate", "cert_file", s.certFile, "hosts", hosts, "sha256", fp.String())
	}
	return nil
}

// writeFile writes b to name through a temporary file in its directory,
// synced and renamed into place.
func writeFile(name string, b []byte, perm os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".*")
	if err != nil {
		return fmt.Errorf("tlscert: %w", err)
	}
	tmp := f.Name()
	err = f.Chmod(perm)
	if err == nil {
		_, err = f.Write(b)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, name)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("tlscert: write %s: %w", name, err)
	}
	if d, err := os.Open(filepath.Dir(name)); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// read reads and checks the pair.
func (s *Store) read() (*loaded, error) {
	cert, err := tls.LoadX509KeyPair(s.certFile, s.keyFile)
	if err != nil {
		return nil, fmt.Errorf("tlscert: %s and %s: %w", s.certFile, s.keyFile, err)
	}
	if cert.Leaf == nil {
		if cert.Leaf, err = x509.ParseCertificate(cert.Certificate[0]); err != nil {
			return nil, fmt.Errorf("tlscert: %s: %w", s.certFile, err)
		}
	}
	return &loaded{cert: &cert, fp: FingerprintOf(cert.Certificate[0])}, nil
}

func (s *Store) stat() fileState {
	var st fileState
	var err error
	if st.cert, err = os.Stat(s.certFile); err != nil {
		st.err = err.Error()
	}
	if st.key, err = os.Stat(s.keyFile); err != nil && st.err == "" {
		st.err = err.Error()
	}
	return st
}

// GetCertificate returns the certificate in use, after taking a new one
// if the files changed on disk (a reload in progress elsewhere is not
// waited for). It is the tls.Config.GetCertificate of [Store.TLSConfig].
func (s *Store) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	s.check()
	return s.cur.Load().cert, nil
}

// TLSConfig returns a clone of base (a new tls.Config when nil) whose
// certificate is the Store's: its Certificates are cleared and its
// GetCertificate is [Store.GetCertificate]. Everything else of base (client
// authentication, versions, NextProtos) is kept.
func (s *Store) TLSConfig(base *tls.Config) *tls.Config {
	var c *tls.Config
	if base == nil {
		c = &tls.Config{MinVersion: tls.VersionTLS12}
	} else {
		c = base.Clone()
	}
	c.Certificates = nil
	c.GetCertificate = s.GetCertificate
	return c
}

// check reloads the files when they changed since the last attempt,
// unless a reload is in progress.
func (s *Store) check() {
	if !s.mu.TryLock() {
		return
	}
	defer s.mu.Unlock()
	st := s.stat()
	if st.same(s.seen) {
		return
	}
	s.seen = st
	_ = s.reloadLocked("changed on disk")
}

// Reload reads the certificate and key files again now, whether or not
// they changed, and serves the new pair from the next handshake on. On
// error the certificate in use is kept and the error (also reported by
// [Store.Err]) returned.
func (s *Store) Reload() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen = s.stat()
	return s.reloadLocked("reload")
}

func (s *Store) reloadLocked(why string) error {
	l, err := s.read()
	if err != nil {
		s.reloadErr.Add(1)
		s.lastErr.Store(&err)
		s.log.Error("TLS: new certificate not taken, keeping the one in use", "why", why, "error", err, "sha256", s.cur.Load().fp.String())
		return err
	}
	old := s.cur.Swap(l)
	s.lastErr.Store(nil)
	s.reloads.Add(1)
	s.log.Info("TLS: certificate reloaded", "why", why, "cert_file", s.certFile, "sha256", l.fp.String(),
		"changed", old.fp != l.fp, "not_after", l.cert.Leaf.NotAfter)
	return nil
}

// Err returns the error of the latest reload when it failed (the
// certificate in use is the one before), and nil after a reload that
// succeeded or before any.
func (s *Store) Err() error {
	if p := s.lastErr.Load(); p != nil {
		return *p
	}
	return nil
}

// Fingerprint returns the SHA-256 fingerprint of the certificate in use
// (the leaf), after taking a new one if the files changed.
func (s *Store) Fingerprint() Fingerprint {
	s.check()
	return s.cur.Load().fp
}

// Leaf returns the certificate in use (the leaf), after taking a new one
// if the files changed: its names, its NotAfter. It must not be modified.
func (s *Store) Leaf() *x509.Certificate {
	s.check()
	return s.cur.Load().cert.Leaf
}

// Stats returns a snapshot of the counters.
func (s *Store) Stats() Stats {
	return Stats{Reloads: s.reloads.Load(), ReloadErrors: s.reloadErr.Load()}
}
