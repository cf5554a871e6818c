package result

import "testing"

func TestDescribeGPUs(t *testing.T) {
	for _, c := range []struct {
		gpus []GPU
		want string
	}{
		{nil, ""},
		{[]GPU{{Model: "NVIDIA H100"}, {Model: "NVIDIA H100"}}, "2x NVIDIA H100"},
		{[]GPU{{Model: "L4"}, {Model: ""}, {Model: "L4"}, {Model: " "}}, "2x L4, 2x unknown"},
		{[]GPU{{Model: "A\x1b[31m100\n"}}, "1x A [31m100"}, // no control character reaches a log
	} {
		if got := DescribeGPUs(c.gpus); got != c.want {
			t.Errorf("DescribeGPUs(%+v) = %q, want %q", c.gpus, got, c.want)
		}
	}
}
