package baseline

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"
)

// Promotions that run at once (two CI jobs promoting into one checkout, say)
// take turns: afterwards every baseline is from one promotion, the last in
// history.jsonl, and each promotion's history lines are together.
func TestConcurrentPromotionsAgree(t *testing.T) {
	const rounds, promotions, scenarios = 12, 4, 8
	for round := range rounds {
		store := Store{Dir: filepath.Join(t.TempDir(), "baselines")}
		var wg sync.WaitGroup
		start := make(chan struct{})
		for p := range promotions {
			r := testResult()
			r.Identity.ConfigHash = fmt.Sprintf("promotion-%d", p)
			for s := range scenarios {
				r.Scenarios = append(r.Scenarios, scenario(fmt.Sprintf("s%02d", s), 30, 31, 32))
			}
			wg.Go(func() {
				<-start
				if _, err := store.Promote(r, Meta{Commit: r.Identity.ConfigHash}); err != nil {
					t.Errorf("Promote(%s) = %v, want nil", r.Identity.ConfigHash, err)
				}
			})
		}
		close(start)
		wg.Wait()

		entries, err := store.History()
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != promotions*scenarios {
			t.Fatalf("round %d: history holds %d entries, want %d", round, len(entries), promotions*scenarios)
		}
		for i := 0; i < len(entries); i += scenarios {
			for _, e := range entries[i : i+scenarios] {
				if e.Commit != entries[i].Commit {
					t.Errorf("round %d: history lines %d..%d mix promotions %s and %s", round, i+1, i+scenarios, entries[i].Commit, e.Commit)
					break
				}
			}
		}
		last := entries[len(entries)-1].Commit
		for s := range scenarios {
			name := fmt.Sprintf("s%02d", s)
			b, err := store.Load(name)
			if err != nil {
				t.Fatal(err)
			}
			if got := b.Identity.ConfigHash; got != last {
				t.Errorf("round %d: baseline %s is from %s, want %s, the last promotion in history.jsonl", round, name, got, last)
			}
		}
	}
}
