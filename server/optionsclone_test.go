package server

import (
	"reflect"
	"testing"
	"time"
)

// fillOptions sets every exported field reachable from Options to a
// non-zero value (one element per slice and map), so the clone check
// below covers option fields added later without being told about them.
func fillOptions(v reflect.Value, depth int) {
	if depth > 8 {
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(7)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(7)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(7)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fillOptions(s.Index(0), depth+1)
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k := reflect.New(v.Type().Key()).Elem()
		e := reflect.New(v.Type().Elem()).Elem()
		fillOptions(k, depth+1)
		fillOptions(e, depth+1)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Pointer:
		if v.Type().Elem().PkgPath() != optionsPkg {
			return // the Logger and the like are shared on purpose
		}
		p := reflect.New(v.Type().Elem())
		fillOptions(p.Elem(), depth+1)
		v.Set(p)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fillOptions(v.Field(i), depth+1)
			}
		}
	case reflect.Array:
		for i := range v.Len() {
			fillOptions(v.Index(i), depth+1)
		}
	}
}

// assertNoSharing fails if a and b (deep-equal values of one type) share
// a slice backing array, a map or a pointer to an option struct.
func assertNoSharing(t *testing.T, path string, a, b reflect.Value) {
	t.Helper()
	switch a.Kind() {
	case reflect.Slice:
		if a.Len() > 0 && a.Pointer() == b.Pointer() {
			t.Errorf("%s: the clone shares the slice", path)
		}
		for i := range a.Len() {
			assertNoSharing(t, path+"[]", a.Index(i), b.Index(i))
		}
	case reflect.Map:
		if a.Len() > 0 && a.Pointer() == b.Pointer() {
			t.Errorf("%s: the clone shares the map", path)
		}
	case reflect.Pointer:
		if a.IsNil() || a.Type().Elem().PkgPath() != optionsPkg {
			return
		}
		if a.Pointer() == b.Pointer() {
			t.Errorf("%s: the clone shares the pointer", path)
		}
		assertNoSharing(t, path, a.Elem(), b.Elem())
	case reflect.Struct:
		for i := range a.NumField() {
			f := a.Type().Field(i)
			if !f.IsExported() {
				if sharedOnPurpose[a.Type().Name()+"."+f.Name] {
					continue
				}
				// clone copies an unexported scalar with its struct but
				// cannot deep-copy a hidden slice, map or pointer.
				switch f.Type.Kind() {
				case reflect.Slice, reflect.Map, reflect.Pointer, reflect.Struct, reflect.Array:
					t.Errorf("%s.%s: unexported reference field in an option type", path, f.Name)
				}
				continue
			}
			assertNoSharing(t, path+"."+f.Name, a.Field(i), b.Field(i))
		}
	}
}

// sharedOnPurpose are unexported fields that hold immutable state the
// server derives itself after the copy (Options.trust: the compiled
// operator, set by withOperator), so sharing them is safe.
var sharedOnPurpose = map[string]bool{"Options.trust": true}

func TestOptionsCloneSharesNothing(t *testing.T) {
	var o Options
	fillOptions(reflect.ValueOf(&o).Elem(), 0)
	if len(o.Accounts) == 0 || o.Accounts[0].JetStream == nil || len(o.Authorization.Users[0].Permissions.Publish.Allow) == 0 {
		t.Fatal("fillOptions left nested fields empty")
	}
	c := o.clone()
	if !reflect.DeepEqual(o, c) {
		t.Fatalf("clone differs from the original:\n%+v\n%+v", o, c)
	}
	assertNoSharing(t, "Options", reflect.ValueOf(o), reflect.ValueOf(c))
}

// TestOptionsNotAliasedAfterNewAndReload edits the caller's Options in
// place after New and after Reload, as a program reusing its config
// would, and checks the running server's settings did not follow.
func TestOptionsNotAliasedAfterNewAndReload(t *testing.T) {
	opts := Options{
		Authorization: Authorization{Users: []User{{
			Name: "u", Password: "p",
			Permissions: &Permissions{Publish: &SubjectPermission{Allow: []string{"orders.>"}}},
		}}},
		Accounts: []Account{{
			Name:     "A",
			Users:    []User{{Name: "a", Password: "p"}},
			Mappings: []Mapping{{Source: "in", Destinations: []MapDestination{{Subject: "out", Weight: 100}}}},
			Exports:  Exports{Streams: []StreamExport{{Subject: "a.>"}}},
		}},
		Mappings:     []Mapping{{Source: "g.in", Destinations: []MapDestination{{Subject: "g.out", Weight: 100}}}},
		PingInterval: time.Minute,
	}
	srv, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	want := func(stage string) {
		t.Helper()
		live := srv.liveOpts()
		if got := live.Authorization.Users[0].Permissions.Publish.Allow[0]; got != "orders.>" {
			t.Errorf("%s: live publish allow = %q, want orders.>", stage, got)
		}
		if got := live.Authorization.Users[0].Password; got != "p" {
			t.Errorf("%s: live password = %q, want p", stage, got)
		}
		if got := live.Accounts[0].Exports.Streams[0].Subject; got != "a.>" {
			t.Errorf("%s: live export = %q, want a.>", stage, got)
		}
		if got := live.Mappings[0].Destinations[0].Subject; got != "g.out" {
			t.Errorf("%s: live mapping = %q, want g.out", stage, got)
		}
	}
	mutate := func() {
		opts.Authorization.Users[0].Permissions.Publish.Allow[0] = ">"
		opts.Authorization.Users[0].Password = "changed"
		opts.Accounts[0].Exports.Streams[0].Subject = "b.>"
		opts.Mappings[0].Destinations[0].Subject = "g.elsewhere"
	}
	mutate()
	want("after New")

	// Put the caller's values back, reload with them, and edit again.
	opts.Authorization.Users[0].Permissions.Publish.Allow[0] = "orders.>"
	opts.Authorization.Users[0].Password = "p"
	opts.Accounts[0].Exports.Streams[0].Subject = "a.>"
	opts.Mappings[0].Destinations[0].Subject = "g.out"
	if err := srv.Reload(opts); err != nil {
		t.Fatal(err)
	}
	mutate()
	want("after Reload")
}
