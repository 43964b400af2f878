package suggest

import (
	"slices"
	"strconv"
	"testing"
)

func TestDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "abc", 3},
		{"steady", "steady", 0},
		{"stedy", "steady", 1},
		{"staedy", "steady", 2},
		{"kitten", "sitting", 3},
		{"µs", "us", 1}, // runes, not bytes
	}
	for _, tt := range tests {
		if got := distance(tt.a, tt.b); got != tt.want {
			t.Errorf("distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := distance(tt.b, tt.a); got != tt.want {
			t.Errorf("distance(%q, %q) = %d, want %d (symmetric)", tt.b, tt.a, got, tt.want)
		}
	}
}

func TestFor(t *testing.T) {
	names := []string{"churn", "errors", "lifecycle", "sharded", "steady", "storm"}
	tests := []struct {
		typed string
		want  []string
	}{
		{"stedy", []string{"steady"}},
		{"STEADY", nil}, // the name itself, in another case: no suggestion
		{"lifecycel", []string{"lifecycle"}},
		{"st", []string{"steady", "storm"}}, // a prefix
		{"strom", []string{"storm"}},
		{"bogus", nil},
		{"", nil},
	}
	for _, tt := range tests {
		if got := For(tt.typed, names); !slices.Equal(got, tt.want) {
			t.Errorf("For(%q) = %q, want %q", tt.typed, got, tt.want)
		}
	}
}

func TestPhrase(t *testing.T) {
	tests := []struct {
		names []string
		want  string
	}{
		{nil, ""},
		{[]string{"steady"}, `did you mean "steady"?`},
		{[]string{"steady", "storm"}, `did you mean "steady" or "storm"?`},
		{[]string{"a", "b", "c"}, `did you mean "a", "b" or "c"?`},
	}
	for _, tt := range tests {
		if got := Phrase(tt.names, strconv.Quote); got != tt.want {
			t.Errorf("Phrase(%q) = %q, want %q", tt.names, got, tt.want)
		}
	}
}
