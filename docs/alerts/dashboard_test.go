package alerts

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/promql/parser"
)

// Every query of the Grafana dashboard (../grafana/bus.json) and of the
// alerts is PromQL that parses, and every series it reads is one
// docs/metrics.md lists: a renamed series fails here, not on an
// operator's screen.
func TestDashboardAndAlertsReadDocumentedSeries(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("../grafana/bus.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("bus.json: %v", err)
	}
	exprs := map[string]string{}
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			exprs["panel "+p.Title] += "\n" + tg.Expr
			checkExpr(t, "panel "+p.Title, tg.Expr, string(doc))
		}
	}
	if len(exprs) < 10 {
		t.Fatalf("only %d panels with queries", len(exprs))
	}
	for name, r := range loadRules(t) {
		checkExpr(t, "alert "+name, r.Expr, string(doc))
	}
}

// grafanaVars replaces the dashboard's variables with values PromQL
// accepts.
var grafanaVars = strings.NewReplacer("$__rate_interval", "5m", "$instance", ".*", "$stream", ".*", "$consumer", ".*")

func checkExpr(t *testing.T, where, expr, doc string) {
	t.Helper()
	e, err := parser.NewParser(parser.Options{}).ParseExpr(grafanaVars.Replace(expr))
	if err != nil {
		t.Errorf("%s: %q: %v", where, expr, err)
		return
	}
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok {
			name := vs.Name
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				if base, cut := strings.CutSuffix(name, suffix); cut && strings.Contains(doc, "`"+base+"`") {
					name = base
				}
			}
			if !strings.Contains(doc, "`"+name+"`") {
				t.Errorf("%s reads %s, which docs/metrics.md does not list", where, vs.Name)
			}
		}
		return nil
	})
}
