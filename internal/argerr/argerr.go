// Package argerr is the argument error shared by pkg/torchrand and pkg/attention: an error that
// names the package, the function and the argument, raised as a panic in graph-building code
// (where there is no error result to return) and caught at the edges with [Catch] or
// [CatchAny]. Each package re-exports it as its ArgumentError and keeps its own sentinel, so
// errors.Is tells the packages' errors apart.
package argerr

import "fmt"

// Error is a bad argument. Its message reads "<Pkg>.<Func>: <Arg> <Problem>", for example
// "torchrand.Dropout: p must be in [0, 1], got NaN" (without "<Pkg>." when Pkg is empty).
type Error struct {
	Pkg     string // package that raised it, e.g. "torchrand"
	Func    string // function or method, e.g. "Dropout" or "MultiHeadAttention.Apply"
	Arg     string // argument, e.g. "p"
	Problem string // what is wrong with it, e.g. "must be in [0, 1], got NaN"
}

// Error implements error.
func (e *Error) Error() string {
	if e.Pkg == "" {
		return e.Func + ": " + e.Arg + " " + e.Problem
	}
	return e.Pkg + "." + e.Func + ": " + e.Arg + " " + e.Problem
}

// Is reports whether target is the sentinel [Sentinel] made for e's package.
func (e *Error) Is(target error) bool {
	s, ok := target.(*sentinel)
	return ok && s.pkg == e.Pkg
}

// sentinel is the value Sentinel returns.
type sentinel struct{ pkg string }

func (s *sentinel) Error() string { return s.pkg + ": invalid argument" }

// Sentinel returns an error reading "<pkg>: invalid argument" that every *Error of package pkg
// matches (errors.Is), and no other.
func Sentinel(pkg string) error { return &sentinel{pkg: pkg} }

// New returns an *Error whose Problem is fmt.Sprintf(format, args...).
func New(pkg, fn, arg, format string, args ...any) *Error {
	return &Error{Pkg: pkg, Func: fn, Arg: arg, Problem: fmt.Sprintf(format, args...)}
}

// Panic panics with New(pkg, fn, arg, format, args...).
func Panic(pkg, fn, arg, format string, args ...any) {
	panic(New(pkg, fn, arg, format, args...))
}

// Catch runs fn and returns the *Error it panicked with if that error matches kind (errors.Is,
// kind being a [Sentinel]), or nil if fn returned normally. Any other panic is passed on
// unchanged.
func Catch(kind error, fn func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(*Error); ok && e.Is(kind) {
				err = e
				return
			}
			panic(r)
		}
	}()
	fn()
	return nil
}

// CatchAny runs fn and returns the error it panicked with (an *Error, or any other error value,
// as GoMLX's graph building panics with errors), or nil if fn returned normally. Panics that are
// not errors are passed on unchanged.
func CatchAny(fn func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(error); ok {
				err = e
				return
			}
			panic(r)
		}
	}()
	fn()
	return nil
}
