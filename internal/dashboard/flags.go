package dashboard

import (
	"os"

	"github.com/spf13/pflag"

	"github.com/ceiling-dev/ceiling/internal/flaggroup"
)

// TokenEnv is the environment variable --dashboard-token may be left to,
// so that the token is not in the process list.
const TokenEnv = "CEILING_DASHBOARD_TOKEN"

// Flags are --dashboard and --dashboard-token.
type Flags struct {
	// Addr is --dashboard ADDR: "" serves no page.
	Addr string
	// Token is --dashboard-token, or TokenEnv.
	Token string
}

// Register adds the flags to fs, under the Outputs help group.
func (f *Flags) Register(fs *pflag.FlagSet) {
	flaggroup.In(fs, flaggroup.Output, func() {
		fs.StringVar(&f.Addr, "dashboard", "", "serve a live page of the run at ADDR, HOST:PORT or :PORT for 127.0.0.1 (e.g. :5665): the step table, plots and answer as they come")
		fs.StringVar(&f.Token, "dashboard-token", "", "the token the live page asks for (needed beyond loopback; default $"+TokenEnv+")")
	})
}

// Listen starts the page the flags ask for: nil, nil when they ask for none.
func (f *Flags) Listen() (*Server, error) {
	if f.Addr == "" {
		return nil, nil
	}
	token := f.Token
	if token == "" {
		token = os.Getenv(TokenEnv)
	}
	return Listen(Options{Addr: f.Addr, Token: token})
}
