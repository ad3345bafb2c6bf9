package host

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// configMapDir lays out a directory as the kubelet mounts a ConfigMap: the
// file is a symlink through ..data, itself a symlink to a timestamped
// directory holding the real file. update swaps ..data atomically, as the
// kubelet does (a new timestamped directory, a ..data_tmp symlink renamed
// over ..data, the old directory removed).
type configMapDir struct {
	t       *testing.T
	dir     string
	current string // the timestamped directory ..data points to
	n       int
}

func newConfigMapDir(t *testing.T, name, content string) *configMapDir {
	c := &configMapDir{t: t, dir: t.TempDir()}
	c.update(name, content)
	if err := os.Symlink(filepath.Join("..data", name), filepath.Join(c.dir, name)); err != nil {
		t.Fatal(err)
	}
	return c
}

func (c *configMapDir) update(name, content string) {
	c.t.Helper()
	c.n++
	ts := fmt.Sprintf("..2026_12_01_11_00_%02d.%09d", c.n, c.n)
	if err := os.Mkdir(filepath.Join(c.dir, ts), 0o755); err != nil {
		c.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(c.dir, ts, name), []byte(content), 0o644); err != nil {
		c.t.Fatal(err)
	}
	tmp := filepath.Join(c.dir, "..data_tmp")
	if err := os.Symlink(ts, tmp); err != nil {
		c.t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(c.dir, "..data")); err != nil {
		c.t.Fatal(err)
	}
	if c.current != "" {
		if err := os.RemoveAll(filepath.Join(c.dir, c.current)); err != nil {
			c.t.Fatal(err)
		}
	}
	c.current = ts
}

// A config mounted from a Kubernetes ConfigMap reloads when the ConfigMap
// changes: no event names the file itself (only ..data and the timestamped
// directories change), yet each swap takes effect.
func TestWatchFileConfigMapSwap(t *testing.T) {
	fh := newFakeHost(t, Options{})
	cm := newConfigMapDir(t, "mcpbridge.yaml", `- {id: a, name: fake, config: {value: "1"}}`)
	stop := fh.watching(t, filepath.Join(cm.dir, "mcpbridge.yaml"))

	for i, value := range []string{"2", "3"} {
		cm.update("mcpbridge.yaml", `- {id: a, name: fake, config: {value: "`+value+`"}}`)
		t.Logf("swap %d", i+1)
		fh.waitRunning(t, map[string]int{"a/" + value: 1})
	}
	stop()
}
