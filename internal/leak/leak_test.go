package leak

import (
	"strings"
	"testing"
)

func makeStream() Object { return Track(ExportedStream) }

func TestTrackCountsAndTraces(t *testing.T) {
	before := Count(ExportedStream)
	untraced := Track(ExportedStream)
	if Count(ExportedStream) != before+1 || len(Sites()) != 0 {
		t.Fatalf("count %d, sites %v", Count(ExportedStream), Sites())
	}
	SetTracing(true)
	defer SetTracing(false)
	traced := makeStream()
	sites := Sites()
	if len(sites) != 1 || !strings.HasPrefix(sites[0], "exported stream, made at:") ||
		!strings.Contains(sites[0], "leak.makeStream") || !strings.Contains(sites[0], "leak_test.go") {
		t.Fatalf("sites %q: want the exported stream made by makeStream", sites)
	}
	traced.Done()
	untraced.Done()
	if Count(ExportedStream) != before || len(Sites()) != 0 {
		t.Fatalf("after Done: count %d, sites %v", Count(ExportedStream), Sites())
	}
}

func TestKindNames(t *testing.T) {
	for k := range NumKinds {
		if k.String() == "" {
			t.Errorf("kind %d has no name", k)
		}
	}
}
