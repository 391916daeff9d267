package vfs

import (
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func writeFile(t *testing.T, fsys FS, name, data string, sync bool) {
	t.Helper()
	f, err := fsys.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte(data)); err != nil {
		t.Fatal(err)
	}
	if sync {
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// content returns a file's bytes, or ok false if it does not exist.
func content(t *testing.T, fsys FS, name string) (string, bool) {
	t.Helper()
	f, err := fsys.OpenFile(name, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close() //nolint:errcheck // read-only
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, st.Size())
	if _, err := f.ReadAt(buf, 0); err != nil && len(buf) > 0 {
		t.Fatal(err)
	}
	return string(buf), true
}

func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Each rule of the package doc, checked on a crash clone.
func TestMemFSCrashKeepsOnlyDurableEntries(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		setup func(t *testing.T, m *MemFS)
		check func(t *testing.T, c *MemFS)
	}{
		{"created file without dir sync is lost, even synced", func(t *testing.T, m *MemFS) {
			writeFile(t, m, "/f", "data", true)
		}, func(t *testing.T, c *MemFS) {
			if _, ok := content(t, c, "/f"); ok {
				t.Fatal("file survived without SyncDir of its parent")
			}
		}},
		{"created file with dir sync but no file sync is empty", func(t *testing.T, m *MemFS) {
			writeFile(t, m, "/f", "data", false)
			mustDo(t, m.SyncDir("/"))
		}, func(t *testing.T, c *MemFS) {
			if got, ok := content(t, c, "/f"); !ok || got != "" {
				t.Fatalf("got %q, %v; want an empty file", got, ok)
			}
		}},
		{"file and dir synced survive", func(t *testing.T, m *MemFS) {
			writeFile(t, m, "/f", "data", true)
			mustDo(t, m.SyncDir("/"))
		}, func(t *testing.T, c *MemFS) {
			if got, _ := content(t, c, "/f"); got != "data" {
				t.Fatalf("got %q", got)
			}
		}},
		{"rename without dir sync keeps the old name", func(t *testing.T, m *MemFS) {
			writeFile(t, m, "/a", "data", true)
			mustDo(t, m.SyncDir("/"))
			mustDo(t, m.Rename("/a", "/b"))
		}, func(t *testing.T, c *MemFS) {
			_, hasA := content(t, c, "/a")
			_, hasB := content(t, c, "/b")
			if !hasA || hasB {
				t.Fatalf("a %v, b %v; want only a", hasA, hasB)
			}
		}},
		{"rename with dir sync moves", func(t *testing.T, m *MemFS) {
			writeFile(t, m, "/a", "data", true)
			mustDo(t, m.SyncDir("/"))
			mustDo(t, m.Rename("/a", "/b"))
			mustDo(t, m.SyncDir("/"))
		}, func(t *testing.T, c *MemFS) {
			_, hasA := content(t, c, "/a")
			got, hasB := content(t, c, "/b")
			if hasA || got != "data" {
				t.Fatalf("a %v, b %q %v; want only b", hasA, got, hasB)
			}
		}},
		{"remove without dir sync comes back", func(t *testing.T, m *MemFS) {
			writeFile(t, m, "/f", "data", true)
			mustDo(t, m.SyncDir("/"))
			mustDo(t, m.Remove("/f"))
		}, func(t *testing.T, c *MemFS) {
			if got, _ := content(t, c, "/f"); got != "data" {
				t.Fatalf("got %q; want the removed file back", got)
			}
		}},
		{"remove with dir sync is gone", func(t *testing.T, m *MemFS) {
			writeFile(t, m, "/f", "data", true)
			mustDo(t, m.SyncDir("/"))
			mustDo(t, m.Remove("/f"))
			mustDo(t, m.SyncDir("/"))
		}, func(t *testing.T, c *MemFS) {
			if _, ok := content(t, c, "/f"); ok {
				t.Fatal("removed file came back")
			}
		}},
		{"undurable directory vanishes with its synced files", func(t *testing.T, m *MemFS) {
			mustDo(t, m.MkdirAll("/a/b", 0o755))
			writeFile(t, m, "/a/b/f", "data", true)
			mustDo(t, m.SyncDir("/a/b"))
			mustDo(t, m.SyncDir("/a")) // b is durable in a, but a is not in /
		}, func(t *testing.T, c *MemFS) {
			if names, err := c.ReadDir("/"); err != nil || len(names) != 0 {
				t.Fatalf("root = %v, %v; want empty", names, err)
			}
		}},
		{"mkdir without parent sync vanishes", func(t *testing.T, m *MemFS) {
			mustDo(t, m.Mkdir("/d", 0o755))
		}, func(t *testing.T, c *MemFS) {
			if _, err := c.ReadDir("/d"); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("ReadDir = %v; want ErrNotExist", err)
			}
		}},
		{"durable directory chain keeps its synced files", func(t *testing.T, m *MemFS) {
			mustDo(t, MkdirAllDurable(m, "/a/b", 0o755))
			writeFile(t, m, "/a/b/f", "data", true)
			mustDo(t, m.SyncDir("/a/b"))
		}, func(t *testing.T, c *MemFS) {
			if got, _ := content(t, c, "/a/b/f"); got != "data" {
				t.Fatalf("got %q", got)
			}
		}},
		{"unsynced bytes are lost", func(t *testing.T, m *MemFS) {
			f, err := m.Create("/f")
			mustDo(t, err)
			_, err = f.Write([]byte("synced"))
			mustDo(t, err)
			mustDo(t, f.Sync())
			_, err = f.Write([]byte("+lost"))
			mustDo(t, err)
			mustDo(t, m.SyncDir("/"))
		}, func(t *testing.T, c *MemFS) {
			if got, _ := content(t, c, "/f"); got != "synced" {
				t.Fatalf("got %q", got)
			}
		}},
		{"relative root is separate and durable", func(t *testing.T, m *MemFS) {
			writeFile(t, m, "f", "rel", true)
			mustDo(t, m.SyncDir("."))
		}, func(t *testing.T, c *MemFS) {
			if got, _ := content(t, c, "f"); got != "rel" {
				t.Fatalf("got %q", got)
			}
			if _, ok := content(t, c, "/f"); ok {
				t.Fatal("relative file visible under /")
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := NewMemFS()
			tt.setup(t, m)
			tt.check(t, m.CrashClone(nil))
		})
	}
}

// With an rng a crash keeps some prefix of the unsynced appended bytes.
func TestMemFSCrashKeepsARandomPrefixOfUnsyncedBytes(t *testing.T) {
	t.Parallel()
	m := NewMemFS()
	f, err := m.Create("/f")
	mustDo(t, err)
	mustDo(t, f.Sync())
	mustDo(t, m.SyncDir("/"))
	_, err = f.Write([]byte("0123456789"))
	mustDo(t, err)
	seen := map[int]bool{}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		got, _ := content(t, m.CrashClone(rng), "/f")
		if got != "0123456789"[:len(got)] {
			t.Fatalf("got %q: not a prefix", got)
		}
		seen[len(got)] = true
	}
	if len(seen) < 5 {
		t.Fatalf("only prefix lengths %v seen", seen)
	}
}

func TestMemFSVolatileCrashIsEmpty(t *testing.T) {
	t.Parallel()
	m := NewVolatileMemFS()
	writeFile(t, m, "/f", "data", true)
	mustDo(t, m.SyncDir("/"))
	if names, _ := m.CrashClone(nil).ReadDir("/"); len(names) != 0 {
		t.Fatalf("volatile clone has %v", names)
	}
}

func TestMemFSDirectoryOps(t *testing.T) {
	t.Parallel()
	m := NewMemFS()
	mustDo(t, m.MkdirAll("/a/b", 0o755))
	writeFile(t, m, "/a/f", "x", false)
	if names, err := m.ReadDir("/a"); err != nil || !slices.Equal(names, []string{"b", "f"}) {
		t.Fatalf("ReadDir = %v, %v", names, err)
	}
	if err := m.Mkdir("/a", 0o755); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("Mkdir existing = %v", err)
	}
	if err := m.Mkdir("/x/y", 0o755); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Mkdir without parent = %v", err)
	}
	if err := m.Remove("/a"); err == nil {
		t.Fatal("removed a non-empty directory")
	}
	if _, err := m.OpenFile("/a/b", os.O_RDONLY, 0); err == nil {
		t.Fatal("opened a directory as a file")
	}
	if _, err := m.Create("/a/f/g"); err == nil {
		t.Fatal("created a file under a file")
	}
	mustDo(t, m.Remove("/a/b"))
	mustDo(t, m.Remove("/a/f"))
	mustDo(t, m.Remove("/a"))
	if names, _ := m.ReadDir("/"); len(names) != 0 {
		t.Fatalf("root = %v", names)
	}
}

func TestMemFSLock(t *testing.T) {
	t.Parallel()
	m := NewMemFS()
	u, err := m.Lock("/LOCK")
	mustDo(t, err)
	if _, err := m.Lock("/LOCK"); !errors.Is(err, ErrLocked) {
		t.Fatalf("second Lock = %v", err)
	}
	mustDo(t, u.Close())
	u, err = m.Lock("/LOCK")
	mustDo(t, err)
	mustDo(t, u.Close())
}

// recordSyncs makes m report the directories SyncDir is called on.
func recordSyncs(m *MemFS) func() []string {
	var synced []string
	m.SetFault(func(op, name string) error {
		if op == "syncdir" {
			synced = append(synced, name)
		}
		return nil
	})
	return func() []string { return synced }
}

func TestMkdirAllDurable(t *testing.T) {
	t.Parallel()
	t.Run("syncs each new entry's parent, deepest first", func(t *testing.T) {
		t.Parallel()
		m := NewMemFS()
		mustDo(t, m.MkdirAll("/store", 0o755)) // exists, and is not ours to sync
		synced := recordSyncs(m)
		mustDo(t, MkdirAllDurable(m, "/store/js/S/consumers", 0o755))
		want := []string{"/store/js/S", "/store/js", "/store"}
		if got := synced(); !slices.Equal(got, want) {
			t.Fatalf("synced %v, want %v", got, want)
		}
	})
	t.Run("existing directory syncs nothing", func(t *testing.T) {
		t.Parallel()
		m := NewMemFS()
		mustDo(t, m.MkdirAll("/a/b", 0o755))
		synced := recordSyncs(m)
		mustDo(t, MkdirAllDurable(m, "/a/b", 0o755))
		if got := synced(); len(got) != 0 {
			t.Fatalf("synced %v", got)
		}
	})
	t.Run("survives a crash", func(t *testing.T) {
		t.Parallel()
		m := NewMemFS()
		mustDo(t, MkdirAllDurable(m, "/a/b/c", 0o755))
		if _, err := m.CrashClone(nil).ReadDir("/a/b/c"); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("failure removes what it created", func(t *testing.T) {
		t.Parallel()
		m := NewMemFS()
		m.SetFault(func(op, name string) error {
			if op == "syncdir" && name == "/a" {
				return errors.New("io error")
			}
			return nil
		})
		if err := MkdirAllDurable(m, "/a/b/c", 0o755); err == nil {
			t.Fatal("no error")
		}
		m.SetFault(nil)
		if names, _ := m.ReadDir("/"); len(names) != 0 {
			t.Fatalf("left %v behind", names)
		}
		synced := recordSyncs(m)
		mustDo(t, MkdirAllDurable(m, "/a/b/c", 0o755))
		if got := synced(); len(got) != 3 {
			t.Fatalf("retry synced %v", got)
		}
	})
	t.Run("below a file fails", func(t *testing.T) {
		t.Parallel()
		m := NewMemFS()
		writeFile(t, m, "/f", "", false)
		if err := MkdirAllDurable(m, "/f/d", 0o755); err == nil {
			t.Fatal("no error")
		}
	})
	t.Run("os", func(t *testing.T) {
		t.Parallel()
		dir := filepath.Join(t.TempDir(), "a", "b")
		mustDo(t, MkdirAllDurable(OSFS{}, dir, 0o755))
		mustDo(t, MkdirAllDurable(OSFS{}, dir, 0o755))
		if _, err := os.Stat(dir); err != nil {
			t.Fatal(err)
		}
	})
}
