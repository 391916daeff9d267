package client_test

import (
	"context"
	"errors"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/client"
)

type quoteReq struct {
	Items []string `json:"items"`
}

type quoteResp struct {
	Total float64 `json:"total"`
}

func TestRequestHandle(t *testing.T) {
	t.Parallel()
	onEachServer(t, func(t *testing.T, url string) {
		c := connect(t, url, client.Options{})
		sub, err := client.Handle(c, "quote", func(_ context.Context, ev client.Event[quoteReq]) (quoteResp, error) {
			switch {
			case len(ev.Data.Items) == 0:
				return quoteResp{}, &client.RemoteError{Code: "400", Message: "no items"}
			case ev.Data.Items[0] == "boom":
				return quoteResp{}, errors.New("pricing down")
			}
			return quoteResp{Total: 2.5 * float64(len(ev.Data.Items))}, nil
		}, client.WithQueue("pricing"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = sub.Unsubscribe() })
		ctx := testContext(t)

		resp, err := client.Request[quoteReq, quoteResp](ctx, c, "quote", quoteReq{Items: []string{"a", "b"}})
		if err != nil || resp.Total != 5 {
			t.Fatalf("quote = %+v, %v; want 5", resp, err)
		}
		// JSON request: the handler reads it and answers in its own codec.
		resp, err = client.Request[quoteReq, quoteResp](ctx, c, "quote", quoteReq{Items: []string{"a"}}, client.WithCodec(client.JSON{}))
		if err != nil || resp.Total != 2.5 {
			t.Fatalf("json quote = %+v, %v; want 2.5", resp, err)
		}
		for _, tc := range []struct {
			items []string
			code  string
		}{{nil, "400"}, {[]string{"boom"}, "500"}} {
			_, err = client.Request[quoteReq, quoteResp](ctx, c, "quote", quoteReq{Items: tc.items})
			var re *client.RemoteError
			if !errors.As(err, &re) || re.Code != tc.code {
				t.Fatalf("items %v: got %v, want a RemoteError with code %s", tc.items, err, tc.code)
			}
		}
		_, err = client.Request[quoteReq, quoteResp](ctx, c, "nobody.home", quoteReq{})
		if !errors.Is(err, nats.ErrNoResponders) {
			t.Fatalf("no handler: got %v, want ErrNoResponders", err)
		}
	})
}
