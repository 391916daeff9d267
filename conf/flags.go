package conf

import "github.com/spf13/pflag"

// AddFlags registers one flag per key on fs, named after the key with "-"
// for "_" (max_payload is --max-payload) and showing its default. Pass the
// same fs to Load after parsing; a flag the user did not set leaves the key
// to the environment, the file and the default, in that order.
func AddFlags(fs *pflag.FlagSet) {
	def := Default()
	for _, k := range keys(&def) {
		if k.fileOnly {
			continue
		}
		f := fs.VarPF(&flagValue{text: k.value.String(), typ: k.value.kind()}, k.flag(), "", k.usage)
		if k.value.kind() == "bool" {
			f.NoOptDefVal = "true" // --jetstream alone means on, as nats-server's flag
		}
	}
}

// flagValue holds a flag's text as given. Load parses it like every other
// source, so a bad value gets the same error wherever it came from.
type flagValue struct {
	text string
	typ  string // for --help only
}

func (f *flagValue) String() string     { return f.text }
func (f *flagValue) Set(s string) error { f.text = s; return nil }
func (f *flagValue) Type() string       { return f.typ }

// rawFlag shows a flag to viper as a string, whatever its type in --help:
// viper would otherwise convert an "int" flag with cast.ToInt, which turns
// "abc" into 0 without an error.
type rawFlag struct{ f *pflag.Flag }

func (r rawFlag) HasChanged() bool    { return r.f.Changed }
func (r rawFlag) Name() string        { return r.f.Name }
func (r rawFlag) ValueString() string { return r.f.Value.String() }
func (r rawFlag) ValueType() string   { return "string" }
