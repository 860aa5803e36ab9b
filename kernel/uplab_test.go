package main

import (
	"strings"
	"testing"
)

func TestLabRunArgs(t *testing.T) {
	name := labContainer("/src/attnbook", 8890)
	if !strings.HasPrefix(name, "attnbook-lab-") || !strings.HasSuffix(name, "-8890") || name == labContainer("/src/other", 8890) {
		t.Errorf("labContainer = %q: want one name per checkout and port", name)
	}
	for _, tc := range []struct {
		asRoot bool
		want   string
	}{
		{false, "run --rm --name NAME -p 127.0.0.1:8890:8888 -e JUPYTER_TOKEN -e ATTNBOOK_SHORT -v /src/attnbook:/home/jovyan/attnbook attnbook:dev start-notebook.sh"},
		{true, "run --rm --name NAME -p 127.0.0.1:8890:8888 -e JUPYTER_TOKEN -e ATTNBOOK_SHORT -v /src/attnbook:/home/jovyan/attnbook --user 0:0 attnbook:dev start-notebook.sh --allow-root"},
	} {
		// The token never appears in argv (other users can read it in ps): only its name.
		if got := strings.Join(labRunArgs("/src/attnbook", "attnbook:dev", "NAME", 8890, tc.asRoot), " "); got != tc.want {
			t.Errorf("labRunArgs(asRoot=%v):\n  %s\nwant\n  %s", tc.asRoot, got, tc.want)
		}
	}
	t.Setenv(imageEnv, "")
	if got := defaultImage(); got != "attnbook:dev" {
		t.Errorf("defaultImage() = %q", got)
	}
	t.Setenv(imageEnv, "attnbook:class")
	if got := defaultImage(); got != "attnbook:class" {
		t.Errorf("defaultImage() with $%s = %q", imageEnv, got)
	}
}
