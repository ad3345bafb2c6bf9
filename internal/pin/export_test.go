package pin

// MemorySize is what b holds in memory of server: definitions pinned in
// full, and withdrawn ones remembered by hash.
func (b *Book) MemorySize(server string) (pinned, withdrawn int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	m := b.memory[server]
	return len(m.offered.Tools) + len(m.offered.Prompts), len(m.withdrawn)
}

// MaxWithdrawn is maxWithdrawn, for the tests.
const MaxWithdrawn = maxWithdrawn
