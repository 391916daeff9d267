// Command arrows counts the arrows between the files of Go packages, for
// issue 29's "upward arrows inside server/": file A points at file B when
// A uses a package-level object (function, method, type, var, const, or a
// field of a type) declared in B. An arrow is "in a cycle" when B also
// reaches A, so no layering of the files can draw it pointing down; those
// are the arrows that run back up in any drawing of the package.
//
// It is a module of its own so that bus does not depend on x/tools:
//
//	cd tests/arrows && go run . /path/to/bus ./server ./server/monitor
//
// Test files are left out.
package main

import (
	"fmt"
	"go/types"
	"os"
	"path/filepath"

	"golang.org/x/tools/go/packages"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: arrows MODULE_DIR PACKAGE...")
		os.Exit(2)
	}
	dir, patterns := os.Args[1], os.Args[2:]
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo, Dir: dir}
	pkgs, err := packages.Load(cfg, patterns...)
	if err != nil {
		panic(err)
	}
	for _, p := range pkgs {
		if len(p.Errors) > 0 {
			fmt.Fprintln(os.Stderr, p.Errors)
		}
		count(p)
	}
}

func count(p *packages.Package) {
	declFile := map[types.Object]string{}
	for id, obj := range p.TypesInfo.Defs {
		if obj == nil || obj.Pkg() != p.Types {
			continue
		}
		// package-level objects, methods and fields
		switch o := obj.(type) {
		case *types.Func:
		case *types.Var:
			if !o.IsField() && o.Parent() != p.Types.Scope() {
				continue
			}
		default:
			if obj.Parent() != p.Types.Scope() {
				continue
			}
		}
		declFile[obj] = filepath.Base(p.Fset.Position(id.Pos()).Filename)
	}
	edges := map[[2]string]bool{}
	for id, obj := range p.TypesInfo.Uses {
		from := filepath.Base(p.Fset.Position(id.Pos()).Filename)
		if o, ok := obj.(*types.Func); ok && o.Origin() != nil {
			obj = o.Origin()
		}
		if v, ok := obj.(*types.Var); ok && v.Origin() != nil {
			obj = v.Origin()
		}
		to, ok := declFile[obj]
		if !ok || to == from {
			continue
		}
		edges[[2]string{from, to}] = true
	}
	// reachability
	adj := map[string][]string{}
	for e := range edges {
		adj[e[0]] = append(adj[e[0]], e[1])
	}
	reach := func(a, b string) bool {
		seen := map[string]bool{a: true}
		stack := []string{a}
		for len(stack) > 0 {
			n := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if n == b {
				return true
			}
			for _, m := range adj[n] {
				if !seen[m] {
					seen[m] = true
					stack = append(stack, m)
				}
			}
		}
		return false
	}
	inCycle, mutual := 0, 0
	scc := map[string]bool{}
	for e := range edges {
		if reach(e[1], e[0]) {
			inCycle++
			scc[e[0]], scc[e[1]] = true, true
		}
		if edges[[2]string{e[1], e[0]}] {
			mutual++
		}
	}
	fmt.Printf("%s: %d files, %d arrows, %d in cycles (files in cycles: %d), %d pairs pointing both ways\n",
		p.PkgPath, len(p.GoFiles), len(edges), inCycle, len(scc), mutual/2)
}
