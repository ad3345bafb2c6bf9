package cli

import "sync"

// sideBySide calls fn(0) … fn(count-1), at most n at once, and returns when
// all have returned. It is for cases that each start processes of their
// own and mostly wait on them (server-everything outlives its stdin, so
// every one-shot command waits out the close grace), so that the waits
// overlap. fn may call t.Error but not t.Fatal.
func sideBySide(n, count int, fn func(i int)) {
	sem := make(chan struct{}, n)
	var wg sync.WaitGroup
	for i := range count {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			fn(i)
		})
	}
	wg.Wait()
}
