package server

import "reflect"

// clone returns a copy of o that shares no slice, map or option struct
// with o. New and Reload keep the options they are given; without the
// copy a caller that reuses or edits its Options after the call (appends
// a user, changes a permission list in place) would change the running
// server's settings behind its back, with no reload, no validation and
// data races against the connections reading them.
//
// Values the caller hands over to be shared on purpose stay shared:
// interfaces (StoreFS) and pointers to types of other packages (the
// Logger).
func (o Options) clone() Options {
	v := reflect.ValueOf(&o).Elem()
	out := reflect.New(v.Type()).Elem()
	cloneInto(out, v)
	return out.Interface().(Options)
}

var optionsPkg = reflect.TypeOf(Options{}).PkgPath()

// cloneInto deep-copies src into dst (same type, dst settable). Only
// exported struct fields are walked: the option types hold no unexported
// state, and reflection cannot set such fields anyway.
func cloneInto(dst, src reflect.Value) {
	switch src.Kind() {
	case reflect.Slice:
		if src.IsNil() {
			return
		}
		s := reflect.MakeSlice(src.Type(), src.Len(), src.Len())
		for i := range src.Len() {
			cloneInto(s.Index(i), src.Index(i))
		}
		dst.Set(s)
	case reflect.Map:
		if src.IsNil() {
			return
		}
		m := reflect.MakeMapWithSize(src.Type(), src.Len())
		iter := src.MapRange()
		for iter.Next() {
			val := reflect.New(src.Type().Elem()).Elem()
			cloneInto(val, iter.Value())
			m.SetMapIndex(iter.Key(), val)
		}
		dst.Set(m)
	case reflect.Pointer:
		if src.IsNil() || src.Type().Elem().PkgPath() != optionsPkg {
			dst.Set(src)
			return
		}
		p := reflect.New(src.Type().Elem())
		cloneInto(p.Elem(), src.Elem())
		dst.Set(p)
	case reflect.Struct:
		dst.Set(src) // scalars and anything not walked below
		t := src.Type()
		for i := range t.NumField() {
			if t.Field(i).IsExported() {
				cloneInto(dst.Field(i), src.Field(i))
			}
		}
	case reflect.Array:
		for i := range src.Len() {
			cloneInto(dst.Index(i), src.Index(i))
		}
	default:
		dst.Set(src)
	}
}
