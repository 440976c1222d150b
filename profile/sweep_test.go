package profile

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func seq(lo, hi int) []int {
	var s []int
	for m := lo; m <= hi; m++ {
		s = append(s, m)
	}
	return s
}

func TestSweepExpand(t *testing.T) {
	for _, tc := range []struct {
		spec string
		M    int
		want []int
	}{
		{"all", 4, []int{1, 2, 3, 4}},
		{"all", 132, seq(1, 132)},
		{"all", 1, []int{1}},
		{"step:16", 132, []int{1, 16, 32, 48, 64, 80, 96, 112, 128, 132}},
		{"step:4", 8, []int{1, 4, 8}},
		{"step:1", 5, []int{1, 2, 3, 4, 5}},
		{"step:200", 132, []int{1, 132}},
		{"step:3", 1, []int{1}},
		{"1,2,4,8", 132, []int{1, 2, 4, 8}},
		{"8, 1, 4 ,4", 132, []int{1, 4, 8}},
		{"1-4,16,132", 132, []int{1, 2, 3, 4, 16, 132}},
		{"1,2,4,...,132", 132, []int{1, 2, 4, 8, 16, 32, 64, 128, 132}},
		{"1,2,4,...,128", 132, []int{1, 2, 4, 8, 16, 32, 64, 128}},
		{"8,16,24,...,64", 132, []int{8, 16, 24, 32, 40, 48, 56, 64}},
		{"1,2,...,6", 132, []int{1, 2, 3, 4, 5, 6}},
		{"2,4,...,10,132", 132, []int{2, 4, 6, 8, 10, 132}}, // two items: arithmetic
		{"1,3,9,...,100", 132, []int{1, 3, 9, 27, 81, 100}},
		{"1,2,3,...,5", 132, []int{1, 2, 3, 4, 5}},
		{"1,2,4,…,16", 132, []int{1, 2, 4, 8, 16}},
	} {
		sw, err := ParseSweep(tc.spec)
		require.NoError(t, err, tc.spec)
		assert.Equal(t, tc.spec, sw.String())
		got, err := sw.Expand(tc.M)
		require.NoError(t, err, tc.spec)
		assert.Equal(t, tc.want, got, "%s on %d SMs", tc.spec, tc.M)
	}
}

func TestSweepErrors(t *testing.T) {
	for _, tc := range []struct{ spec, want string }{
		{"", "--sms is empty"},
		{"none", `"none" is not a positive SM count`},
		{"0,1", `"0" is not a positive SM count`},
		{"step:0", "step:N needs a positive integer"},
		{"step:x", "step:N needs a positive integer"},
		{"4-2", "LOW <= HIGH"},
		{"1,x", `"x" is not a positive SM count`},
		{"...,4", `"..." needs two single counts before it`},
		{"1,...,4", `"..." needs two single counts before it`},
		{"1,2,...", `"..." needs two single counts before it`},
		{"1,2,...,...,8", `"..." needs two single counts before it`},
		{"1-2,4,...,8", `"..." needs two single counts before it`},
		{"4,2,...,8", "must increase"},
	} {
		_, err := ParseSweep(tc.spec)
		require.Error(t, err, tc.spec)
		assert.Contains(t, err.Error(), tc.want, tc.spec)
	}
	for _, tc := range []struct {
		spec, want string
		M          int
	}{
		{"1,2,200", "200 SMs asked for, the device has 132", 132},
		{"1-140", "133 SMs asked for", 132},
		{"1,2,4,...,256", "256 SMs asked for", 132},
		{"all", "the device reports 0 SMs", 0},
	} {
		sw, err := ParseSweep(tc.spec)
		require.NoError(t, err, tc.spec)
		_, err = sw.Expand(tc.M)
		require.Error(t, err, tc.spec)
		assert.Contains(t, err.Error(), tc.want, tc.spec)
	}
	_, err := Sweep{}.Expand(4)
	assert.Error(t, err, "a zero Sweep is not a sweep")
}
