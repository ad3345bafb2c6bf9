package mcptest

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// RedisServer is a real redis-server on a loopback port of its own, with
// no persistence, for the tests of the gateway's store. Stop and Start
// take it away and bring it back on the same port.
type RedisServer struct {
	t    testing.TB
	Port int
	cmd  *exec.Cmd
	log  *bytes.Buffer
	// CA is the PEM of the CA that signs a TLS server's certificate
	// (StartRedisTLS), nil for a plain one.
	CA   []byte
	tls  []string // redis-server's TLS arguments
	args []string // its further arguments (StartRedisArgs)
}

// StartRedis starts redis-server (the Debian package redis-server, which
// scripts/install-redis.sh installs in `make deps`) and stops it when the
// test ends. A missing redis-server fails the test, in CI and out: the
// store's guarantees are tested against the real server or not at all.
func StartRedis(t testing.TB) *RedisServer { return startRedis(t, false) }

// StartRedisArgs is StartRedis with redis-server's further arguments,
// such as --requirepass PASSWORD.
func StartRedisArgs(t testing.TB, args ...string) *RedisServer {
	t.Helper()
	return startRedis(t, false, args...)
}

// StartRedisTLS is StartRedis serving TLS only, with a certificate for
// 127.0.0.1 and redis.test of a CA made for the test (CA); clients need
// no certificate of their own.
func StartRedisTLS(t testing.TB) *RedisServer { return startRedis(t, true) }

func startRedis(t testing.TB, withTLS bool, args ...string) *RedisServer {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Fatalf("redis-server is not installed: run ./scripts/install-redis.sh (make deps) (%v)", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	r := &RedisServer{t: t, Port: port, args: args}
	if withTLS {
		r.CA, r.tls = redisTLS(t, port)
	}
	r.Start()
	t.Cleanup(r.Stop)
	return r
}

// URL is the server's redis:// URL (rediss:// with TLS).
func (r *RedisServer) URL() string {
	if r.CA != nil {
		return fmt.Sprintf("rediss://127.0.0.1:%d/0", r.Port)
	}
	return fmt.Sprintf("redis://127.0.0.1:%d/0", r.Port)
}

// Addr is the server's host:port.
func (r *RedisServer) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(r.Port)) }

// Start starts the server (again) and waits until it accepts connections.
func (r *RedisServer) Start() {
	r.t.Helper()
	r.log = &bytes.Buffer{}
	args := []string{"--port", strconv.Itoa(r.Port)}
	if r.tls != nil {
		args = append([]string{"--port", "0"}, r.tls...)
	}
	args = append(args, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", r.t.TempDir(), "--loglevel", "warning")
	r.cmd = exec.Command("redis-server", append(args, r.args...)...)
	r.cmd.Stdout, r.cmd.Stderr = r.log, r.log
	if err := r.cmd.Start(); err != nil {
		r.t.Fatalf("starting redis-server: %v", err)
	}
	Eventually(r.t, 20*time.Second, func() bool {
		c, err := net.Dial("tcp", r.Addr())
		if err != nil {
			return false
		}
		c.Close()
		return true
	}, "redis-server to listen on %s (its log: %s)", r.Addr(), r.log)
}

// Stop kills the server and waits for it; stopping a stopped server does
// nothing.
func (r *RedisServer) Stop() {
	if r.cmd == nil {
		return
	}
	r.cmd.Process.Kill()
	r.cmd.Wait()
	r.cmd = nil
}

// Freeze stops the server's process (SIGSTOP) without closing its
// connections: a server that hangs. Thaw lets it go on.
func (r *RedisServer) Freeze() { r.cmd.Process.Signal(syscall.SIGSTOP) }

// Thaw resumes a frozen server (SIGCONT).
func (r *RedisServer) Thaw() { r.cmd.Process.Signal(syscall.SIGCONT) }

// redisTLS makes a CA and a server certificate it signs, in files of the
// test, and returns the CA's PEM and redis-server's arguments serving
// TLS on port.
func redisTLS(t testing.TB, port int) ([]byte, []string) {
	t.Helper()
	key := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	caKey, srvKey := key(), key()
	now := time.Now()
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "mcptest redis CA"}, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	srv := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "redis.test"}, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		DNSNames: []string{"redis.test"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	srvDER, err := x509.CreateCertificate(rand.Reader, srv, ca, &srvKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	srvKeyDER, err := x509.MarshalECPrivateKey(srvKey)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	files := map[string][]byte{
		"ca.pem":   caPEM,
		"cert.pem": pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srvDER}),
		"key.pem":  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: srvKeyDER}),
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return caPEM, []string{"--tls-port", strconv.Itoa(port), "--tls-cert-file", filepath.Join(dir, "cert.pem"),
		"--tls-key-file", filepath.Join(dir, "key.pem"), "--tls-ca-cert-file", filepath.Join(dir, "ca.pem"), "--tls-auth-clients", "no"}
}
