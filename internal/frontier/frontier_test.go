package frontier

import (
	"slices"
	"testing"
)

func TestPareto(t *testing.T) {
	pt := func(id int, x, y float64) paretoPoint {
		return paretoPoint{id: id, x: x, y: y, lo: y - 0.05, hi: y + 0.05}
	}
	for _, tc := range []struct {
		name      string
		ps        []paretoPoint
		optimal   []int
		dominated map[int][]int
	}{
		{"none", nil, []int{}, nil},
		{"single", []paretoPoint{pt(0, 1, 0.5)}, []int{0}, nil},
		{"equal points: neither dominates", []paretoPoint{pt(0, 1, 0.5), pt(1, 1, 0.5)}, []int{0, 1}, nil},
		{"tie on x, better y", []paretoPoint{pt(0, 1, 0.5), pt(1, 1, 0.6)}, []int{1}, map[int][]int{0: {1}}},
		{"tie on y, lower x", []paretoPoint{pt(0, 2, 0.5), pt(1, 1, 0.5)}, []int{1}, map[int][]int{0: {1}}},
		{"trade-off", []paretoPoint{pt(0, 1, 0.5), pt(1, 2, 0.7), pt(2, 3, 0.9)}, []int{0, 1, 2}, nil},
		{"all dominated by one", []paretoPoint{pt(0, 2, 0.5), pt(1, 1, 0.9), pt(2, 3, 0.6), pt(3, 1.5, 0.8)}, []int{1},
			map[int][]int{0: {1, 3}, 2: {1, 3}, 3: {1}}},
		{"optimal sorted by x", []paretoPoint{pt(5, 3, 0.9), pt(7, 1, 0.5), pt(6, 2, 0.7), pt(8, 2.5, 0.6)}, []int{7, 6, 5},
			map[int][]int{8: {6}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := pareto(tc.ps)
			if !slices.Equal(got.Optimal, tc.optimal) {
				t.Errorf("pareto(%v).Optimal = %v, want %v", tc.ps, got.Optimal, tc.optimal)
			}
			if len(got.Dominated) != len(tc.dominated) {
				t.Errorf("pareto(%v).Dominated = %+v, want %v", tc.ps, got.Dominated, tc.dominated)
			}
			for _, d := range got.Dominated {
				by := slices.Clone(d.By)
				slices.Sort(by)
				if want := tc.dominated[d.Config]; !slices.Equal(by, want) {
					t.Errorf("pareto(%v): %d dominated by %v, want %v", tc.ps, d.Config, d.By, want)
				}
				if len(d.WithinNoise) != len(d.By) {
					t.Errorf("pareto: %d has %d within-noise marks for %d dominators", d.Config, len(d.WithinNoise), len(d.By))
				}
			}
		})
	}
}

func TestParetoWithinNoise(t *testing.T) {
	// 0.70 [0.60, 0.80] against 0.75 [0.72, 0.78]: overlapping; against
	// 0.95 [0.90, 1]: apart.
	ps := []paretoPoint{{id: 0, x: 2, y: 0.70, lo: 0.60, hi: 0.80}, {id: 1, x: 1, y: 0.75, lo: 0.72, hi: 0.78}, {id: 2, x: 1, y: 0.95, lo: 0.90, hi: 1}}
	got := pareto(ps)
	for _, d := range got.Dominated {
		if d.Config != 0 {
			continue
		}
		for j, by := range d.By {
			if want := by == 1; d.WithinNoise[j] != want {
				t.Errorf("0 dominated by %d within noise = %v, want %v", by, d.WithinNoise[j], want)
			}
		}
		return
	}
	t.Errorf("pareto(%v) = %+v, want 0 dominated", ps, got)
}

func TestFrontierLabels(t *testing.T) {
	cs := []Config{
		{File: "a.json", Model: "llama-8b", Quantization: "fp8", Engine: "vllm", Version: "0.6.3"},
		{File: "b.json", Model: "llama-8b", Quantization: "fp8", Engine: "vllm", Version: "0.6.3"},
		{File: "c.json", Model: "llama-8b", Engine: "vllm"},
		{File: "d.json"},
		{File: "e.json", Model: "m", Quantization: "awq"},
	}
	frontierLabels(cs)
	want := []string{"llama-8b fp8 · vllm 0.6.3 (a.json)", "llama-8b fp8 · vllm 0.6.3 (b.json)", "llama-8b · vllm", "d.json", "m awq"}
	for i, c := range cs {
		if c.Label != want[i] {
			t.Errorf("label of %s = %q, want %q", c.File, c.Label, want[i])
		}
	}
}

// A censored capacity is placed at its bound, not its value: dominance
// holds only where the truth behind the bound cannot reverse it. An
// at-most capacity (below_min: optimistic figures) dominates nothing; an
// at-least one (above_max, client_limited) is dominated by nothing.
func TestParetoCensored(t *testing.T) {
	pt := func(id int, x, y float64, bound string) paretoPoint {
		return paretoPoint{id: id, x: x, y: y, lo: y - 0.05, hi: y + 0.05,
			mayBeBetter: bound == BoundAtLeast, mayBeWorse: bound == BoundAtMost}
	}
	for _, tc := range []struct {
		name      string
		ps        []paretoPoint
		optimal   []int
		dominated map[int][]int
	}{
		{"at most: dominates nothing it beats as placed",
			[]paretoPoint{pt(0, 1, 0.9, BoundAtMost), pt(1, 2, 0.5, "")}, []int{0, 1}, nil},
		{"at most: dominated by what beats its optimistic figure",
			[]paretoPoint{pt(0, 2, 0.5, BoundAtMost), pt(1, 1, 0.9, "")}, []int{1}, map[int][]int{0: {1}}},
		{"at least: never dominated, even by a better point",
			[]paretoPoint{pt(0, 2, 0.5, BoundAtLeast), pt(1, 1, 0.9, "")}, []int{1, 0}, nil},
		{"at least: dominates what its pessimistic figure beats",
			[]paretoPoint{pt(0, 1, 0.9, BoundAtLeast), pt(1, 2, 0.5, "")}, []int{0}, map[int][]int{1: {0}}},
		{"at least over at most",
			[]paretoPoint{pt(0, 1, 0.9, BoundAtLeast), pt(1, 2, 0.5, BoundAtMost)}, []int{0}, map[int][]int{1: {0}}},
		{"at most against at least: neither",
			[]paretoPoint{pt(0, 1, 0.9, BoundAtMost), pt(1, 2, 0.5, BoundAtLeast)}, []int{0, 1}, nil},
		{"two at most: neither",
			[]paretoPoint{pt(0, 1, 0.9, BoundAtMost), pt(1, 2, 0.5, BoundAtMost)}, []int{0, 1}, nil},
		{"an at-most point is dominated by every point beating its figure",
			[]paretoPoint{pt(0, 1, 0.9, ""), pt(1, 2, 0.5, ""), pt(2, 3, 0.4, BoundAtMost)}, []int{0},
			map[int][]int{1: {0}, 2: {0, 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := pareto(tc.ps)
			if !slices.Equal(got.Optimal, tc.optimal) {
				t.Errorf("Optimal = %v, want %v", got.Optimal, tc.optimal)
			}
			if len(got.Dominated) != len(tc.dominated) {
				t.Errorf("Dominated = %+v, want %v", got.Dominated, tc.dominated)
			}
			for _, d := range got.Dominated {
				if want := tc.dominated[d.Config]; !slices.Equal(d.By, want) {
					t.Errorf("%d dominated by %v, want %v", d.Config, d.By, want)
				}
			}
		})
	}
}

// paretoOf marks the censored configurations on both axes: an at-least
// capacity, cheaper and faster than placed for all the frontier knows, is
// dominated on neither; an at-most one dominates on neither.
func TestParetoOfCensored(t *testing.T) {
	price := func(x float64) *float64 { return &x }
	cs := []Config{
		{OutputThroughput: 1000, CostPerMTok: price(1), Bound: BoundAtLeast}, // as placed, beaten by 1 on both
		{OutputThroughput: 2000, CostPerMTok: price(0.5)},
		{OutputThroughput: 3000, CostPerMTok: price(0.3), Bound: BoundAtMost}, // as placed, beats 1 on both
	}
	points := []Point{{Config: 0, Accuracy: 0.5}, {Config: 1, Accuracy: 0.6}, {Config: 2, Accuracy: 0.7}}
	for _, axis := range []Axis{CostAxis, ThroughputAxis} {
		got := paretoOf(points, cs, axis)
		if len(got.Dominated) != 0 {
			t.Errorf("lower=%v: dominated %+v, want none: 0's truth may beat both, 2's may lose to both", axis.Lower, got.Dominated)
		}
		cs[0].Bound, cs[2].Bound = "", ""
		if got := paretoOf(points, cs, axis); len(got.Dominated) != 2 {
			t.Errorf("lower=%v uncensored: dominated %+v, want 0 and 1", axis.Lower, got.Dominated)
		}
		cs[0].Bound, cs[2].Bound = BoundAtLeast, BoundAtMost
	}
}
