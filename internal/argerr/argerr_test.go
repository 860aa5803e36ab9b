package argerr

import (
	"errors"
	"fmt"
	"testing"
)

// TestError: the message names package, function and argument; each package's sentinel matches
// only that package's errors, also through wrapping.
func TestError(t *testing.T) {
	a, b := Sentinel("a"), Sentinel("b")
	e := New("a", "F", "x", "must be > %d, got %d", 0, -1)
	if got, want := e.Error(), "a.F: x must be > 0, got -1"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if got, want := (&Error{Func: "F", Arg: "x", Problem: "is bad"}).Error(), "F: x is bad"; got != want {
		t.Errorf("without Pkg: Error() = %q, want %q", got, want)
	}
	if got, want := a.Error(), "a: invalid argument"; got != want {
		t.Errorf("Sentinel(a).Error() = %q, want %q", got, want)
	}
	wrapped := fmt.Errorf("exec: %w", e)
	if !errors.Is(wrapped, a) || errors.Is(wrapped, b) || errors.Is(wrapped, errors.New("a: invalid argument")) {
		t.Errorf("errors.Is: want a match for Sentinel(a) only")
	}
	var ae *Error
	if !errors.As(wrapped, &ae) || ae != e {
		t.Errorf("errors.As did not find the *Error")
	}
}

// TestCatch: Catch returns its kind's *Error and passes every other panic on; CatchAny returns
// any error value and passes non-errors on.
func TestCatch(t *testing.T) {
	a := Sentinel("a")
	if err := Catch(a, func() {}); err != nil {
		t.Errorf("Catch of a normal call = %v", err)
	}
	if err := Catch(a, func() { Panic("a", "F", "x", "is bad") }); err == nil || err.Error() != "a.F: x is bad" {
		t.Errorf("Catch = %v, want a.F: x is bad", err)
	}
	other := errors.New("other")
	for _, p := range []any{"other", other, New("b", "F", "x", "is bad")} {
		func() {
			defer func() {
				if r := recover(); r != p {
					t.Errorf("Catch: recovered %v, want %v passed on", r, p)
				}
			}()
			_ = Catch(a, func() { panic(p) })
		}()
	}
	if err := CatchAny(func() { panic(other) }); err != other {
		t.Errorf("CatchAny = %v, want %v", err, other)
	}
	if err := CatchAny(func() {}); err != nil {
		t.Errorf("CatchAny of a normal call = %v", err)
	}
	defer func() {
		if r := recover(); r != "other" {
			t.Errorf("CatchAny: recovered %v, want the original panic", r)
		}
	}()
	_ = CatchAny(func() { panic("other") })
}
