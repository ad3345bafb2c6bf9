package store

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/logging"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/mcpbridge/mcpbridge/internal/redact"
)

// Bounds on one exchange with Redis: a store that does not answer soon is
// treated as down (the callers fall back), never waited on.
const (
	dialTimeout = time.Second
	ioTimeout   = 500 * time.Millisecond
	pingTimeout = 3 * time.Second
)

// RedisOptions configure a Redis store.
type RedisOptions struct {
	// URL is redis://[user:password@]host:port[/db], or rediss:// for TLS.
	URL string
	// KeyPrefix starts every key the store writes, so replicas of one
	// gateway share keys and other users of the server are left alone;
	// "" is "mcpbridge:".
	KeyPrefix string
	// CA, for a rediss:// URL, is the PEM of the CA that signs the
	// server's certificate; nil trusts the system's roots.
	CA []byte
	// ServerName, for a rediss:// URL, is the name the server's
	// certificate must carry; "" is the URL's host.
	ServerName string
	// Observe is told of each call to Redis: its operation and its error
	// (nil when it worked); a metric. Nil observes nothing.
	Observe func(op string, err error)
}

// Redis is a store in a Redis server. Open it with OpenRedis and Close it
// when done. Safe for concurrent use.
type Redis struct {
	client  *redis.Client
	prefix  string
	addr    string
	db      int // the url's /N
	observe func(string, error)
}

// OpenRedis connects to the server at opts.URL and checks that it answers:
// a store that cannot be reached at start is an error naming its host and
// port (never its password).
func OpenRedis(ctx context.Context, opts RedisOptions) (*Redis, error) {
	// go-redis prints its own lines to stderr (a failed dial, each time),
	// past the structured log and into --log-format json's stream; the
	// store's callers log and count every error it returns instead. The
	// switch is go-redis's, process-wide, and always set the same way.
	logging.Disable()
	ro, err := redis.ParseURL(opts.URL)
	if err != nil {
		return nil, fmt.Errorf("the store's url (%s): %w", redact.URLs(opts.URL), redact.Error(err))
	}
	if err := withTLS(ro, opts); err != nil {
		return nil, err
	}
	ro.DialTimeout, ro.ReadTimeout, ro.WriteTimeout, ro.PoolTimeout = dialTimeout, ioTimeout, ioTimeout, ioTimeout
	// A failed call falls back at once, and a later one tries again.
	ro.MaxRetries, ro.DialerRetries = -1, 1
	// The caller's deadline bounds the socket's too: a server that hangs
	// holds a call only as long as its caller allows.
	ro.ContextTimeoutEnabled = true
	ro.DisableIdentity = true
	ro.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	r := &Redis{client: redis.NewClient(ro), prefix: cmpOr(opts.KeyPrefix, "mcpbridge:"), addr: ro.Addr, db: ro.DB, observe: opts.Observe}
	if r.observe == nil {
		r.observe = func(string, error) {}
	}
	pctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	if err := r.Ping(pctx); err != nil {
		return nil, errors.Join(err, r.client.Close())
	}
	return r, nil
}

// withTLS sets the CA and server name of opts on ro, a rediss:// URL's
// options; they are an error on a redis:// one, which would send them
// nowhere.
func withTLS(ro *redis.Options, opts RedisOptions) error {
	if len(opts.CA) == 0 && opts.ServerName == "" {
		return nil
	}
	if ro.TLSConfig == nil {
		return fmt.Errorf("the store at redis %s: a CA or server name needs a rediss:// url", ro.Addr)
	}
	if len(opts.CA) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(opts.CA) {
			return fmt.Errorf("the store at redis %s: its CA holds no PEM certificate", ro.Addr)
		}
		ro.TLSConfig.RootCAs = pool
	}
	if opts.ServerName != "" {
		ro.TLSConfig.ServerName = opts.ServerName
	}
	return nil
}

// Addr is the server's host:port.
func (r *Redis) Addr() string { return r.addr }

// Ping checks that the server answers.
func (r *Redis) Ping(ctx context.Context) error {
	err := r.client.Ping(ctx).Err()
	r.observe("ping", err)
	if err != nil {
		return fmt.Errorf("the store at redis %s %w", r.addr, r.failure(err))
	}
	return nil
}

// failure says what the server did instead of answering a call, and how
// to fix the url if that is the cause: its refusal (a wrong or missing
// password, a database it lacks), HTTP where Redis was expected, or no
// answer at all.
func (r *Redis) failure(err error) error {
	err = redact.Error(err)
	msg := err.Error()
	var refusal redis.Error
	switch {
	case errors.As(err, &refusal) && strings.HasPrefix(msg, "WRONGPASS"):
		return fmt.Errorf("answered %w: check the password (and the ACL user, if the url names one) in store.redis.url", err)
	case errors.As(err, &refusal) && strings.HasPrefix(msg, "NOAUTH"):
		return fmt.Errorf("answered %w: it requires a password, and the url gives none: write the url as redis://:${REDIS_PASSWORD}@HOST:PORT", err)
	case errors.As(err, &refusal) && strings.Contains(msg, "DB index is out of range"):
		return fmt.Errorf("answered %w: the url's /%d is out of range for this server's databases setting (16 by default): use a lower one, such as /0", err, r.db)
	case errors.As(err, &refusal):
		return fmt.Errorf("answered %w", err)
	case strings.Contains(msg, "HTTP/"):
		return fmt.Errorf("answers HTTP, not Redis (%w): check the url's port", err)
	}
	return fmt.Errorf("does not answer: %w", err)
}

// Close closes the connections to the server.
func (r *Redis) Close() error { return r.client.Close() }

// gcra is the generic cell rate algorithm on one key, atomic in the
// server: the key holds the bucket's theoretical arrival time (TAT) in
// microseconds of the server's clock, so replicas' clocks never matter.
// ARGV: the interval between tokens and the bucket's depth (interval ×
// burst), both in microseconds. It returns {1, 0} for a token taken, or
// {0, µs until one is}. The key expires once the bucket is full again.
var gcra = redis.NewScript(`
local now = redis.call('TIME')
local t = tonumber(now[1]) * 1000000 + tonumber(now[2])
local interval = tonumber(ARGV[1])
local depth = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or t)
if tat < t then tat = t end
local next = tat + interval
if next - t > depth then
  return {0, math.ceil(next - t - depth)}
end
redis.call('SET', KEYS[1], string.format('%.0f', next), 'PX', math.ceil((next - t) / 1000) + 1)
return {1, 0}
`)

// Take takes a token of key's bucket (refilled at perSecond, holding
// burst), shared by every replica using the server; when there is none it
// returns how long until there is. A refused call takes nothing. An error
// means the server could not say: the caller decides what then.
func (r *Redis) Take(ctx context.Context, key string, perSecond float64, burst int) (bool, time.Duration, error) {
	interval := math.Max(1, math.Round(1e6/perSecond))
	res, err := gcra.Run(ctx, r.client, []string{r.prefix + "rate:" + key}, int64(interval), int64(interval)*int64(burst)).Int64Slice()
	r.observe("take", err)
	if err != nil {
		return false, 0, fmt.Errorf("taking a token from the store at redis %s: %w", r.addr, redact.Error(err))
	}
	if len(res) != 2 {
		return false, 0, fmt.Errorf("taking a token from the store at redis %s: the script answered %v", r.addr, res)
	}
	return res[0] == 1, time.Duration(res[1]) * time.Microsecond, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
