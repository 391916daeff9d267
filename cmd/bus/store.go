package main

import (
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
	return &cobra.Command{
		Use:   "verify DIR",
		Short: "Check every record, index, seq mark and consumer journal",
		Long: `Check every stream of the store: each record's checksum, the indexes,
the seq mark (what was acknowledged), each consumer's journal. Prints
each damaged stream with the exact seqs affected and whether they had
been acknowledged. An encrypted stream is checked with --key; without
the right key it is listed as not checked. Exit codes: 0 no damage, 1
the store could not be read, a stream could not be checked, or a running
bus holds it, 2 bad usage, 3 damage found.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			reports, err := inspectStore(args[0], keys)
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
}

func newStoreInfoCmd(keys *storeKeys) *cobra.Command {
	return &cobra.Command{
		Use:   "info DIR",
		Short: "List the streams of a store: messages, seqs, sizes, consumers",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			reports, err := inspectStore(args[0], keys)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "STREAM\tSTORAGE\tMESSAGES\tBYTES\tFIRST\tLAST\tCONSUMERS\tON DISK\tSTATE")
			for _, r := range reports {
				state := "ok"
				if r.keyErr != nil {
					state = "not read: " + r.keyErr.Error()
				} else if r.damaged() {
					state = "DAMAGED (bus store verify)"
				} else if r.openErr != nil {
					state = "unreadable: " + r.openErr.Error()
				}
				fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\n", r.name, r.storage, r.state.Msgs, r.state.Bytes,
					r.state.FirstSeq, r.state.LastSeq, len(r.consumers), r.diskBytes, state)
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
	recovery  jetlog.RecoveryReport
	consumers []consumerReport
	diskBytes int64
	openErr   error
	keyErr    error // encrypted, and no key or another one: not checked
}

type consumerReport struct {
	name    string
	corrupt []*jetlog.CorruptError
	err     error
}

func (r *streamReport) damaged() bool {
	if r.openErr != nil || len(r.recovery.Corrupt) > 0 || len(r.recovery.Losses) > 0 || len(r.recovery.RebuiltIndexes) > 0 ||
		len(r.recovery.Problems) > 0 || r.recovery.TruncatedBytes > 0 {
		return true
	}
	for _, c := range r.consumers {
		if c.err != nil || len(c.corrupt) > 0 {
			return true
		}
	}
	return false
}

// write prints the stream's verdict, and reports whether it is damaged.
func (r *streamReport) write(w io.Writer) bool {
	if !r.damaged() {
		fmt.Fprintf(w, "%s: ok, %d messages, seqs %d..%d, %d consumers\n", r.name, r.state.Msgs, r.state.FirstSeq, r.state.LastSeq, len(r.consumers))
		return false
	}
	fmt.Fprintf(w, "%s: DAMAGED (%s)\n", r.name, r.dir)
	if r.openErr != nil {
		fmt.Fprintf(w, "  cannot be opened: %v\n", r.openErr)
	}
	rec := r.recovery
	for _, x := range rec.Losses {
		fmt.Fprintf(w, "  lost seqs %s (%s): %s in %s\n", seqList(x.First, x.Last), x.Acked, x.Reason, x.Segment)
	}
	for _, c := range rec.Corrupt {
		fmt.Fprintf(w, "  damaged record: %s at offset %d: %s\n", c.Segment, c.Offset, c.Reason)
	}
	if rec.TruncatedBytes > 0 {
		fmt.Fprintf(w, "  torn tail: %d bytes at the end of %s\n", rec.TruncatedBytes, rec.TornSegment)
	}
	for _, idx := range rec.RebuiltIndexes {
		fmt.Fprintf(w, "  index %s is damaged or missing (a start rebuilds it from its segment)\n", idx)
	}
	for _, p := range rec.Problems {
		fmt.Fprintf(w, "  %s\n", p)
	}
	for _, c := range r.consumers {
		if c.err != nil {
			fmt.Fprintf(w, "  consumer %s cannot be opened: %v\n", c.name, c.err)
		}
		for _, ce := range c.corrupt {
			fmt.Fprintf(w, "  consumer %s journal damaged: %s at offset %d: %s (rebuilt from what is intact: acked messages may be delivered again)\n",
				c.name, ce.Segment, ce.Offset, ce.Reason)
		}
	}
	return true
}

// seqList writes a loss's seqs: each one when there are few, else the
// first and last of the unbroken range (every seq in it is affected).
func seqList(first, last uint64) string {
	if last-first < 16 {
		var b strings.Builder
		for s := first; s <= last; s++ {
			if s > first {
				b.WriteString(", ")
			}
			fmt.Fprint(&b, s)
		}
		return b.String()
	}
	return fmt.Sprintf("%d through %d, every one (%d seqs)", first, last, last-first+1)
}

// inspectStore opens every stream of the store read-only. dir is
// store_dir or its jetstream folder.
func inspectStore(dir string, keys *storeKeys) ([]*streamReport, error) {
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
		reports = append(reports, inspectStream(sdir, ring))
	}
	sort.Slice(reports, func(i, j int) bool { return reports[i].name < reports[j].name })
	return reports, nil
}

func inspectStream(dir string, ring *jetlog.Keyring) *streamReport {
	r := &streamReport{name: filepath.Base(dir), dir: dir}
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
		r.openErr = err
		return r
	}
	r.storage = cfg.Storage
	l, err := jetlog.Open(dir, cfg, opts)
	if err != nil {
		r.openErr = err
		return r
	}
	defer l.Close()
	r.state, r.recovery = l.State(), l.Recovery()
	names, err := l.ConsumerNames()
	if err != nil {
		r.consumers = append(r.consumers, consumerReport{name: "(list)", err: err})
	}
	for _, name := range names {
		cr := consumerReport{name: name}
		ccfg, err := l.LoadConsumerConfig(name)
		if err == nil {
			var c *jetlog.Consumer
			if c, err = l.OpenConsumer(name, ccfg); err == nil {
				cr.corrupt = c.Corrupt()
				err = c.Close()
			}
		}
		if errors.Is(err, jetlog.ErrNotFound) {
			err = fmt.Errorf("its config is missing: %w", err)
		}
		cr.err = err
		r.consumers = append(r.consumers, cr)
	}
	return r
}
