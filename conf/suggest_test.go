package conf

import "testing"

func TestHint(t *testing.T) {
	t.Parallel()
	var ks = newKeySet(new(Config))
	tests := []struct {
		name       string
		candidates []string
		want       string
	}{
		{"prot", ks.names(), `did you mean "port"?`},
		{"max_payloda", ks.names(), `did you mean "max_payload"?`},
		{"max_paylod", ks.names(), `did you mean "max_payload"?`},
		{"http-port", ks.names(), `did you mean "http_port"?`},
		{"payload", ks.names(), `did you mean "max_payload"?`},
		{"max_pings", ks.names(), `did you mean "max_pings_out"?`},
		{"BUS_PROT", ks.envNames(), `did you mean "BUS_PORT"?`},
		{"bus_port", ks.envNames(), `did you mean "BUS_PORT"?`},
		{"max", ks.names(), ""}, // too short to guess from
		{"pt", ks.names(), ""},  // every letter would change
		{"port_", ks.names(), `did you mean "port"?`},
		{"frobnicate", ks.names(), ""},
	}
	for _, tt := range tests {
		if got := hint(tt.name, tt.candidates); got != tt.want {
			t.Errorf("hint(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestEditDistance(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"port", "port", 0},
		{"prot", "port", 1}, // a swap counts once
		{"por", "port", 1},
		{"", "port", 4},
		{"kitten", "sitting", 3},
	}
	for _, tt := range tests {
		if got := editDistance(tt.a, tt.b); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := editDistance(tt.b, tt.a); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.b, tt.a, got, tt.want)
		}
	}
}
