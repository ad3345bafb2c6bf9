// Package errtext gives an error new words (redacted, cut, escaped) while
// errors.Is and errors.As still find what it was.
package errtext

// Map returns err with its text passed through f. errors.Is and errors.As
// still see err. When f leaves the text as it was, err itself is returned,
// so that nothing wraps an error for nothing; nil stays nil.
func Map(err error, f func(string) string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if shown := f(msg); shown != msg {
		return &mapped{msg: shown, err: err}
	}
	return err
}

// mapped is an error whose text was rewritten for showing.
type mapped struct {
	msg string
	err error
}

func (e *mapped) Error() string { return e.msg }
func (e *mapped) Unwrap() error { return e.err }
