package backend

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestChoose(t *testing.T) {
	env := func(v string) func(string) (string, bool) {
		return func(string) (string, bool) { return v, v != "" }
	}
	jax := "/usr/lib/python3/dist-packages/jax_plugins/xla_cuda13/xla_cuda_plugin.so"
	for _, tc := range []struct {
		name    string
		env     string
		plugins []string
		jax     []string
		gpu     bool
		want    string
		reason  string
	}{
		{"nothing installed", "", nil, nil, false, GoConfig(), "no XLA PJRT plugin"},
		{"env wins", "xla:cpu", nil, nil, false, "xla:cpu", "set by $GOMLX_BACKEND"},
		{"env go over plugins", "go", []string{"cpu", "cuda"}, nil, true, "go", "set by"},
		{"cpu plugin", "", []string{"cpu"}, nil, false, "xla:cpu", "CPU PJRT plugin"},
		{"cuda plugin without gpu", "", []string{"cpu", "cuda"}, nil, false, "xla:cpu", "CPU PJRT plugin"},
		{"cuda plugin without gpu nor cpu", "", []string{"cuda"}, nil, false, GoConfig(), "no XLA PJRT plugin"},
		{"gpu and cuda", "", []string{"cpu", "cuda"}, nil, true, "xla:cuda", "CUDA PJRT plugin"},
		{"gpu and jax", "", []string{"cpu"}, []string{jax}, true, "xla:" + jax, "JAX's CUDA"},
		{"gpu without cuda", "", []string{"cpu"}, nil, true, "xla:cpu", "no CUDA plugin"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !XLACompiled && tc.reason == "no XLA PJRT plugin" {
				tc.reason = "built without XLA (-tags noxla)"
			}
			c := choose(env(tc.env), tc.plugins, tc.jax, tc.gpu)
			if c.Config != tc.want || !strings.Contains(c.Reason, tc.reason) {
				t.Errorf("choose = %q (%s), want %q with reason containing %q", c.Config, c.Reason, tc.want, tc.reason)
			}
			if !strings.HasPrefix(c.String(), "backend: ") || strings.Contains(c.String(), "\n") {
				t.Errorf("String() = %q, want one line starting with \"backend: \"", c.String())
			}
		})
	}
}

func TestGoConfig(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, c := range []struct {
		procs int
		want  string
	}{{1, "go:num_executors=1"}, {2, "go:num_executors=2"}, {7, "go:num_executors=7"}, {8, "go"}, {64, "go"}} {
		runtime.GOMAXPROCS(c.procs)
		if got := GoConfig(); got != c.want {
			t.Errorf("GOMAXPROCS=%d: GoConfig() = %q, want %q", c.procs, got, c.want)
		}
		if _, err := newBackend(GoConfig()); err != nil {
			t.Errorf("GOMAXPROCS=%d: the backend does not start with %q: %v", c.procs, GoConfig(), err)
		}
	}
}

func TestDefaultRuns(t *testing.T) {
	b, err := Default()
	if err != nil {
		t.Fatalf("Default: %v", err)
	}
	t.Log(Chosen())
	if b.Name() == "" {
		t.Error("backend has no name")
	}
}

func TestBadConfigIsAnError(t *testing.T) {
	if _, err := newBackend("no-such-backend"); err == nil || !strings.Contains(err.Error(), "no-such-backend") {
		t.Errorf("newBackend(no-such-backend) error = %v, want one naming the backend", err)
	}
	// The XLA backend without a plugin must fail fast and never download.
	if len(localPlugins()) == 0 {
		if _, err := newBackend("xla:cpu"); err == nil {
			t.Error("xla:cpu without a plugin: want an error")
		}
	}
}

func TestWithExpGODEBUG(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", "cpu.fma=off"},
		{"gctrace=1", "gctrace=1,cpu.fma=off"},
		{"cpu.fma=on", "cpu.fma=on"},
		{"gctrace=1, cpu.fma=off", "gctrace=1, cpu.fma=off"},
	} {
		if got := WithExpGODEBUG(c.in); got != c.want {
			t.Errorf("WithExpGODEBUG(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestJAXCUDAPluginsInVirtualEnvOnPath(t *testing.T) {
	// A virtual environment like the one JAX's install guide makes, not activated: only its bin
	// folder is on PATH (as on machines whose python3 is a venv's).
	venv := t.TempDir()
	plugin := filepath.Join(venv, "lib/python3.12/site-packages/jax_plugins/xla_cuda13/xla_cuda_plugin.so")
	if err := os.MkdirAll(filepath.Dir(plugin), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{plugin, filepath.Join(venv, "pyvenv.cfg")} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(venv, "bin")
	path := strings.Join([]string{"/usr/bin", bin, "/bin"}, string(os.PathListSeparator))
	for _, c := range []struct {
		name, path, venv string
		times            int // how often the plugin is in the answer
	}{
		{"on PATH", path, "", 1},
		{"activated", "/usr/bin", venv, 1},
		{"both, found once", path, venv, 1},
		{"neither", "/usr/bin", "", 0},
		{"a bin folder without pyvenv.cfg", filepath.Dir(plugin), "", 0},
	} {
		got := jaxCUDAPluginsIn("", c.path, c.venv)
		if n := strings.Count(strings.Join(got, "\n"), plugin); n != c.times {
			t.Errorf("%s: jaxCUDAPluginsIn(PATH=%q, VIRTUAL_ENV=%q) = %q, want %s %d time(s)", c.name, c.path, c.venv, got, plugin, c.times)
		}
	}
}

func TestCUDAConfig(t *testing.T) {
	jax := "/opt/torch/.venv/lib/python3.12/site-packages/jax_plugins/xla_cuda13/xla_cuda_plugin.so"
	nvidia := "/opt/torch/.venv/lib/python3.12/site-packages/nvidia"
	for _, c := range []struct {
		config, want string
		libs         bool // site-packages/nvidia exists
		quiet        bool
	}{
		{"go", "go", true, false},
		{"go:num_executors=2", "go:num_executors=2", true, false},
		{"xla:cpu", "xla:cpu", true, false},
		{"xla:cuda", "xla:cuda,notf32", true, false},
		{"xla:cuda,tf32", "xla:cuda,tf32", true, false},
		{"xla:cuda,tf32=true", "xla:cuda,tf32=true", true, false},
		{"xla:cuda,notf32", "xla:cuda,notf32", true, false},
		{"xla:cuda,preallocate", "xla:cuda,preallocate,notf32", true, false},
		{"xla:/usr/local/lib/go-xla/pjrt_c_api_cuda_plugin.so", "xla:/usr/local/lib/go-xla/pjrt_c_api_cuda_plugin.so,notf32", true, false},
		{"xla:" + jax, "xla:" + jax + ",notf32", true, true},
		{"xla:" + jax, "xla:" + jax + ",notf32", false, false},
	} {
		isDir := func(dir string) bool { return c.libs && filepath.Clean(dir) == nvidia }
		got, quiet := cudaConfig(c.config, isDir)
		if got != c.want || quiet != c.quiet {
			t.Errorf("cudaConfig(%q) with site-packages/nvidia=%v = %q, %v; want %q, %v", c.config, c.libs, got, quiet, c.want, c.quiet)
		}
	}
}
