package classroom_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Budgets for test.sh: with the attnbook image present it builds only the hub layer (a minute)
// and runs a class of 10; without it, it first builds the attnbook image (docker/build.sh).
const (
	classBudget     = 25 * time.Minute
	fullBuildBudget = 60 * time.Minute
)

// TestClassroom runs docker/classroom/test.sh: a JupyterHub with a class of students (10, or
// $CLASSROOM_TEST_STUDENTS) who log in, start servers and run notebooks/00_start_here.ipynb at
// once through the attnbook kernel, driven only through the hub's and the servers' APIs; then
// isolation checks, a hub restart that keeps the students' files, and the idle culler.
//
// It runs when CI=true or ATTNBOOK_DOCKER_TEST=1; then a missing docker daemon is a failure.
//
//	ATTNBOOK_DOCKER_TEST=1 go test -v -timeout 60m ./docker/classroom/
func TestClassroom(t *testing.T) {
	ci := os.Getenv("CI") == "true"
	asked := os.Getenv("ATTNBOOK_DOCKER_TEST") == "1"
	if !ci && !asked {
		t.Skip("\n" + strings.Repeat("!", 78) + "\n" +
			"!!! SKIPPED: the classroom hub (JupyterHub + a class of 10) was NOT tested.\n" +
			"!!! Run it with:  ATTNBOOK_DOCKER_TEST=1 go test -v -timeout 60m ./docker/classroom/\n" +
			"!!! (or docker/classroom/test.sh). It needs a docker daemon (and, when the\n" +
			"!!! attnbook image is missing, what docker/build.sh needs); CI=true makes it mandatory.\n" +
			strings.Repeat("!", 78))
	}
	why := "CI=true"
	if !ci {
		why = "ATTNBOOK_DOCKER_TEST=1"
	}
	if _, err := exec.LookPath("docker"); err != nil {
		t.Fatalf("%s but docker is not installed: the classroom hub cannot be tested", why)
	}
	if out, err := exec.Command("docker", "info", "--format", "{{.ServerVersion}}").CombinedOutput(); err != nil {
		t.Fatalf("%s but no docker daemon answers (docker info: %v):\n%s", why, err, out)
	}
	budget := classBudget
	base := os.Getenv("ATTNBOOK_IMAGE")
	if base == "" {
		base = "attnbook:dev"
	}
	if exec.Command("docker", "image", "inspect", base).Run() != nil {
		budget = fullBuildBudget
	}
	if dl, ok := t.Deadline(); ok && time.Until(dl) < budget {
		t.Fatalf("the classroom test needs up to %v (image %s present: %v) but go test's deadline is in %v: run go test with -timeout 60m",
			budget, base, budget == classBudget, time.Until(dl).Round(time.Second))
	}

	want := 10
	if s := os.Getenv("CLASSROOM_TEST_STUDENTS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 2 {
			t.Fatalf("CLASSROOM_TEST_STUDENTS=%q: want a number >= 2", s)
		}
		want = n
	}
	report := filepath.Join(t.TempDir(), "classroom.json")
	ctx, cancel := context.WithTimeout(context.Background(), budget)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "test.sh", "--students", strconv.Itoa(want), "--json", report)
	// On timeout: SIGTERM, so the script's trap removes its containers and volumes.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 2 * time.Minute
	var out bytes.Buffer
	w := io.MultiWriter(&out, testWriter{t})
	cmd.Stdout, cmd.Stderr = w, w
	start := time.Now()
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("test.sh ran past %v and was stopped", budget)
	}
	if err != nil {
		t.Fatalf("test.sh failed after %v: %v", time.Since(start).Round(time.Second), err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, fmt.Sprintf("classroom: ok students=%d ", want)) {
		t.Fatalf("test.sh exited 0 but its last line is not a success summary for %d students: %q", want, last)
	}
	t.Log(last)

	// The numbers behind the summary line: what test.sh measured must be there and plausible.
	data, err := os.ReadFile(report)
	if err != nil {
		t.Fatalf("test.sh wrote no report: %v", err)
	}
	var r struct {
		Students           int     `json:"students"`
		FirstCellAll       float64 `json:"first_cell_all_s"`
		FirstCellMedian    float64 `json:"first_cell_median_s"`
		IsolationAPIChecks int     `json:"isolation_api_checks"`
		IsolationProbes    int     `json:"isolation_kernel_probes"`
		Memory             struct {
			Servers   int     `json:"servers"`
			Kernels   int     `json:"kernels"`
			ServerPSS float64 `json:"server_pss_mib_mean"`
			KernelPSS float64 `json:"kernel_pss_mib_mean"`
		} `json:"memory"`
		Restart struct {
			StudentsOK int      `json:"restart_students_ok"`
			CulledS    *float64 `json:"culled_after_s"`
		} `json:"restart"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatalf("report %s: %v\n%s", report, err, data)
	}
	checks := []struct {
		what string
		ok   bool
	}{
		{fmt.Sprintf("students = %d, want %d", r.Students, want), r.Students == want},
		{fmt.Sprintf("first cells: median %.1fs <= all %.1fs, both > 0", r.FirstCellMedian, r.FirstCellAll),
			r.FirstCellMedian > 0 && r.FirstCellMedian <= r.FirstCellAll},
		{fmt.Sprintf("servers measured = %d, kernels = %d, want %d each", r.Memory.Servers, r.Memory.Kernels, want),
			r.Memory.Servers == want && r.Memory.Kernels == want},
		{fmt.Sprintf("server PSS %.1f MiB and kernel PSS %.1f MiB are in (1, 4096)", r.Memory.ServerPSS, r.Memory.KernelPSS),
			r.Memory.ServerPSS > 1 && r.Memory.ServerPSS < 4096 && r.Memory.KernelPSS > 1 && r.Memory.KernelPSS < 4096},
		{fmt.Sprintf("isolation: %d API checks (want %d), %d kernel probes", r.IsolationAPIChecks, 11*want, r.IsolationProbes),
			r.IsolationAPIChecks == 11*want && r.IsolationProbes >= 12},
		{fmt.Sprintf("after the restart %d students ok (want %d), idle culler measured: %v", r.Restart.StudentsOK, want, r.Restart.CulledS != nil),
			r.Restart.StudentsOK == want && r.Restart.CulledS != nil},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("classroom report: %s\n%s", c.what, data)
		}
	}
}

// testWriter streams the script's output into the test log line by line.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
