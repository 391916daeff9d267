package conf_test

import (
	"fmt"

	"github.com/bus-dev/bus/conf"
	"github.com/spf13/pflag"
)

func ExampleLoad() {
	fs := pflag.NewFlagSet("bus", pflag.ContinueOnError)
	conf.AddFlags(fs)
	if err := fs.Parse([]string{"--max-payload", "8MB", "--ping-interval", "30", "--port", "prot"}); err != nil {
		fmt.Println(err)
		return
	}
	if _, err := conf.Load("", fs); err != nil {
		fmt.Println(err)
	}

	if err := fs.Set("port", "4333"); err != nil {
		fmt.Println(err)
		return
	}
	cfg, err := conf.Load("", fs)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cfg.Port, cfg.MaxPayload, cfg.PingInterval)
	// Output:
	// conf: port: "prot" is not an integer (from flag --port)
	// 4333 8388608 30s
}
