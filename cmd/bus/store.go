package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/bus-dev/bus/jetlog"
)

func newStoreCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "store",
		Short: "Check and describe a store directory, offline",
		Long: `Read a store directory (store_dir, or its jetstream/ folder) without
starting a server and without changing a byte of it: jetlog's own
recovery runs on a read-only view, whatever it would repair is kept in
memory. A directory a running bus holds (its LOCK) is refused.`,
	}
	var keys storeKeys
	cmd.PersistentFlags().StringVar(&keys.key, "key", "", "the store's encryption key (jetstream.key), for an encrypted store")
	cmd.PersistentFlags().StringVar(&keys.cipher, "cipher", "", "the cipher of new streams (chachapoly or aes); a stream keeps its own")
	cmd.AddCommand(newStoreVerifyCmd(&keys), newStoreInfoCmd(&keys))
	return cmd
}

// storeKeys opens an encrypted store's streams.
type storeKeys struct{ key, cipher string }

func (k *storeKeys) keyring() (*jetlog.Keyring, error) {
	if k.key == "" {
		return nil, nil
	}
	c, err := jetlog.ParseCipher(k.cipher)
	if err != nil {
		return nil, &exitError{exitUsage, fmt.Errorf("--cipher: %w", err)}
	}
	ring, err := jetlog.NewKeyring(c, k.key, "")
	if err != nil {
		return nil, &exitError{exitUsage, fmt.Errorf("--key: %w", err)}
	}
	return ring, nil
}

func newStoreVerifyCmd(keys *storeKeys) *cobra.Command {
	var online onlineVerify
	cmd := &cobra.Command{
		Use:   "verify DIR | verify -s URL STREAM",
		Short: "Check every record, index, seq mark and consumer journal",
		Long: `Check every stream of the store: each record's checksum, the indexes,
the seq mark (what was acknowledged), each consumer's journal. Prints
each damaged stream with the exact seqs affected and whether they had
been acknowledged. An encrypted stream is checked with --key; without
the right key it is listed as not checked.

With -s URL (or --context, or --online with $NATS_URL) it checks one
STREAM of a running bus instead, through $BUS.API.STORE.VERIFY.<stream>,
while the stream keeps serving; the caller must be allowed to read every
subject the stream holds. The report is the offline one's.

Exit codes: 0 no damage, 1 the store could not be read, a stream could
not be checked, or a running bus holds it (online: no such stream, no
rights, another verify of it running, no answer), 2 bad usage, 3 damage
found.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if online.chosen(cmd) {
				if online.rateMB < 0 {
					return &exitError{exitUsage, fmt.Errorf("--rate-mb %d: a rate is 0 (no bound) or more", online.rateMB)}
				}
				if keys.key != "" || keys.cipher != "" {
					return &exitError{exitUsage, fmt.Errorf("--key and --cipher are for a store directory: a running bus has its own keys")}
				}
				return online.run(args[0], cmd.OutOrStdout())
			}
			if online.rateMB < 0 {
				return &exitError{exitUsage, fmt.Errorf("--rate-mb %d: a rate is 0 (no bound) or more", online.rateMB)}
			}
			reports, err := inspectStore(args[0], keys, online.rateMB<<20)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			damagedStreams, unchecked := 0, 0
			for _, r := range reports {
				switch {
				case r.keyErr != nil:
					unchecked++
					fmt.Fprintf(out, "%s: NOT CHECKED: %v\n", r.name, r.keyErr)
				case r.write(out):
					damagedStreams++
				}
			}
			if damagedStreams > 0 {
				return &exitError{exitDamaged, fmt.Errorf("%d of %d streams damaged", damagedStreams, len(reports))}
			}
			if unchecked > 0 {
				return &exitError{exitFailure, fmt.Errorf("%d of %d streams not checked (encrypted: give their --key)", unchecked, len(reports))}
			}
			fmt.Fprintf(out, "%d streams, no damage\n", len(reports))
			return nil
		},
	}
	online.register(cmd)
	return cmd
}

func newStoreInfoCmd(keys *storeKeys) *cobra.Command {
	return &cobra.Command{
		Use:   "info DIR",
		Short: "List the streams of a store: messages, seqs, sizes, consumers",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			reports, err := inspectStore(args[0], keys, 0)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "STREAM\tSTORAGE\tMESSAGES\tBYTES\tFIRST\tLAST\tCONSUMERS\tON DISK\tSTATE")
			for _, r := range reports {
				state := "ok"
				if r.keyErr != nil {
					state = "not read: " + r.keyErr.Error()
				} else if r.check.OpenError != "" {
					state = "unreadable: " + r.check.OpenError
				} else if r.damaged() {
					state = "DAMAGED (bus store verify)"
				}
				fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\n", r.name, r.storage, r.state.Msgs, r.state.Bytes,
					r.state.FirstSeq, r.state.LastSeq, len(r.check.Consumers), r.diskBytes, state)
			}
			return tw.Flush()
		},
	}
}

// streamReport is what opening one stream read-only found.
type streamReport struct {
	name, dir string
	storage   jetlog.Storage
	state     jetlog.State
	check     *jetlog.VerifyReport // recovery's findings and a Verify's, as the online check reports them
	diskBytes int64
	keyErr    error // encrypted, and no key or another one: not checked
}

func (r *streamReport) damaged() bool { return r.check.Damaged() }

// write prints the stream's verdict, and reports whether it is damaged.
func (r *streamReport) write(w io.Writer) bool { return r.check.Write(w) }

// inspectStore opens every stream of the store read-only and verifies
// it, reading at most rate bytes a second (0: no bound). dir is
// store_dir or its jetstream folder.
func inspectStore(dir string, keys *storeKeys, rate int64) ([]*streamReport, error) {
	ring, err := keys.keyring()
	if err != nil {
		return nil, err
	}
	if st, err := os.Stat(filepath.Join(dir, "jetstream")); err == nil && st.IsDir() {
		dir = filepath.Join(dir, "jetstream")
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, &exitError{exitUsage, fmt.Errorf("store %s: %w", dir, err)}
	}
	if err := refuseLocked(filepath.Join(dir, "LOCK")); err != nil {
		return nil, err
	}
	var reports []*streamReport
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue // .restore: restores in progress
		}
		sdir := filepath.Join(dir, e.Name())
		if err := refuseLocked(filepath.Join(sdir, "LOCK")); err != nil {
			return nil, err
		}
		reports = append(reports, inspectStream(sdir, ring, rate))
	}
	sort.Slice(reports, func(i, j int) bool { return reports[i].name < reports[j].name })
	return reports, nil
}

func inspectStream(dir string, ring *jetlog.Keyring, rate int64) *streamReport {
	r := &streamReport{name: filepath.Base(dir), dir: dir}
	r.check = &jetlog.VerifyReport{Stream: r.name, Dir: dir}
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				r.diskBytes += info.Size()
			}
		}
		return nil
	})
	opts := jetlog.Options{FS: newOverlayFS(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Keys: ring}
	cfg, _, err := jetlog.LoadConfigWith(dir, opts)
	if errors.Is(err, jetlog.ErrNotEncrypted) { // a plaintext stream of a store given --key
		opts.Keys = nil
		cfg, _, err = jetlog.LoadConfigWith(dir, opts)
	}
	if errors.Is(err, jetlog.ErrNoKey) || errors.Is(err, jetlog.ErrWrongKey) {
		r.keyErr = err
		return r
	}
	if err != nil {
		r.check.OpenError = err.Error()
		return r
	}
	r.storage = cfg.Storage
	l, err := jetlog.Open(dir, cfg, opts)
	if err != nil {
		r.check.OpenError = err.Error()
		return r
	}
	defer l.Close()
	// The consumers are opened first, so that the Verify checks their
	// files too, as the online one does.
	var failed []jetlog.ConsumerCheck
	found := map[string][]*jetlog.CorruptError{}
	names, err := l.ConsumerNames()
	if err != nil {
		failed = append(failed, jetlog.ConsumerCheck{Name: "(list)", Error: err.Error()})
	}
	for _, name := range names {
		ccfg, err := l.LoadConsumerConfig(name)
		if err == nil {
			var c *jetlog.Consumer
			if c, err = l.OpenConsumer(name, ccfg); err == nil {
				found[name] = c.Corrupt()
				defer c.Close()
			}
		}
		if errors.Is(err, jetlog.ErrNotFound) {
			err = fmt.Errorf("its config is missing: %w", err)
		}
		if err != nil {
			failed = append(failed, jetlog.ConsumerCheck{Name: name, Error: err.Error()})
		}
	}
	check, err := l.Verify(context.Background(), jetlog.VerifyOptions{BytesPerSecond: rate})
	if err != nil {
		r.check.OpenError = "verify: " + err.Error()
		return r
	}
	check.Dir = dir
	check.AddRecovery(l.Recovery())
	for i := range check.Consumers {
		check.Consumers[i].AddConsumerDamage(found[check.Consumers[i].Name])
	}
	check.Consumers = append(check.Consumers, failed...)
	sort.Slice(check.Consumers, func(i, j int) bool { return check.Consumers[i].Name < check.Consumers[j].Name })
	r.check, r.state = check, l.State()
	return r
}
