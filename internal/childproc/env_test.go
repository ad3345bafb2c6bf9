//go:build linux

package childproc

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEnv(t *testing.T) {
	tests := []struct {
		name    string
		parent  []string
		overlay map[string]string
		want    []string
	}{
		{
			name: "credential-shaped and MCPBRIDGE_ names are dropped",
			parent: []string{
				"API_KEY=k", "MY_SECRET=s", "AUTH_TOKEN=t", "MONKEY=m",
				"TOKENIZERS_PARALLELISM=false", "PASSWORD_STORE_DIR=/p",
				"AWS_CREDENTIALS=c", "MCPBRIDGE_CONFIG=/c", "mcpbridge_debug=1",
				"db_passwd=p", "github_token=lower", "Secret_Sauce=x",
			},
			want: []string{},
		},
		{
			name: "ordinary names are kept",
			parent: []string{
				"PATH=/usr/bin", "HOME=/home/u", "LANG=C.UTF-8", "LC_ALL=C",
				"HTTPS_PROXY=http://proxy:3128", "no_proxy=localhost",
				"SSH_AUTH_SOCK=/tmp/agent", "XMCPBRIDGE_NOT_PREFIX=1",
			},
			want: []string{
				"HOME=/home/u", "HTTPS_PROXY=http://proxy:3128", "LANG=C.UTF-8", "LC_ALL=C",
				"PATH=/usr/bin", "SSH_AUTH_SOCK=/tmp/agent", "XMCPBRIDGE_NOT_PREFIX=1",
				"no_proxy=localhost",
			},
		},
		{
			name:    "overlay wins, credential-shaped names included, empty sets empty",
			parent:  []string{"GITHUB_TOKEN=parent", "LANG=C", "KEEP=1"},
			overlay: map[string]string{"GITHUB_TOKEN": "ghp_x", "LANG": "de_DE.UTF-8", "EMPTY": "", "MCPBRIDGE_MODE": "on"},
			want:    []string{"EMPTY=", "GITHUB_TOKEN=ghp_x", "KEEP=1", "LANG=de_DE.UTF-8", "MCPBRIDGE_MODE=on"},
		},
		{
			name:    "malformed parent entries and unrepresentable overlay names are dropped",
			parent:  []string{"NOEQUALS", "=C:=C:\\x", "A=1=2", "A2="},
			overlay: map[string]string{"": "x", "B=C": "x", "D\x00": "x"},
			want:    []string{"A=1=2", "A2="},
		},
		{
			name:   "last duplicate wins and output is sorted by name",
			parent: []string{"Z=1", "A_B=1", "A=first", "A1=1", "A=second"},
			want:   []string{"A=second", "A1=1", "A_B=1", "Z=1"},
		},
		{
			name: "nil inputs give an empty, non-nil environment",
			want: []string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Env(tt.parent, tt.overlay)
			if got == nil {
				t.Fatal("Env returned nil; nil would mean 'inherit' to Transport")
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Env mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLookPath(t *testing.T) {
	dir := t.TempDir()
	bin1 := filepath.Join(dir, "bin1")
	bin2 := filepath.Join(dir, "bin2")
	for _, d := range []string{bin1, bin2, filepath.Join(dir, "rel")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(path string, mode os.FileMode) {
		t.Helper()
		if err := os.WriteFile(path, []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(bin1, "tool"), 0o644) // not executable: skipped
	write(filepath.Join(bin2, "tool"), 0o755)
	if err := os.Mkdir(filepath.Join(bin1, "dirtool"), 0o755); err != nil { // a directory: skipped
		t.Fatal(err)
	}
	write(filepath.Join(dir, "rel", "reltool"), 0o755)
	write(filepath.Join(dir, "cwdtool"), 0o755)
	t.Chdir(dir)

	tests := []struct {
		name    string
		file    string
		env     []string
		want    string
		wantErr error
	}{
		{name: "slash names are used as given", file: "./x/y", env: nil, want: "./x/y"},
		{name: "first executable match wins", file: "tool", env: []string{"PATH=" + bin1 + ":" + bin2}, want: filepath.Join(bin2, "tool")},
		{name: "last PATH entry in env wins", file: "tool", env: []string{"PATH=/nonexistent", "PATH=" + bin2}, want: filepath.Join(bin2, "tool")},
		{name: "directories do not match", file: "dirtool", env: []string{"PATH=" + bin1}, wantErr: exec.ErrNotFound},
		{name: "no PATH finds nothing", file: "tool", env: []string{"HOME=/"}, wantErr: exec.ErrNotFound},
		{name: "relative PATH entry is refused", file: "reltool", env: []string{"PATH=rel"}, wantErr: exec.ErrDot},
		{name: "empty PATH entry means the current directory, refused", file: "cwdtool", env: []string{"PATH=" + bin1 + "::"}, wantErr: exec.ErrDot},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := lookPath(tt.file, tt.env)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("lookPath(%q) error = %v, want %v", tt.file, err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("lookPath(%q) = %q, want %q", tt.file, got, tt.want)
			}
		})
	}
}
