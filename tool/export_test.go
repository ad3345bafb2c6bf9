package tool

// SetBeforeJoin makes f run as a subscriber is about to join its
// resource's subscription, until the test ends.
func SetBeforeJoin(cleanup func(func()), f func()) {
	testHookBeforeJoin = f
	cleanup(func() { testHookBeforeJoin = nil })
}
