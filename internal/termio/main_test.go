package termio

import (
	"testing"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

func TestMain(m *testing.M) { mcptest.VerifyTestMain(m) }
