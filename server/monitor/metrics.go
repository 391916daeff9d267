package monitor

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// metricsHandler serves /metrics (the series are listed in
// docs/metrics.md). A registry of this server's own holds the Go runtime
// and process collectors and the server's collector, which reads every
// number at scrape time; nothing is updated on the message path for it
// beyond the counters the server keeps anyway. The per-stream and
// per-consumer series, which grow with the streams and consumers, are
// written straight into the text format from the same snapshot (see
// writeObjects), since the registry's gathering, sorting and encoding of
// 100k samples costs seconds; see BenchmarkMetricsScrape.
func (m *Server) metricsHandler() http.Handler {
	base := prometheus.NewRegistry()
	base.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	descs := newCollector()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// One snapshot of the counters and of JetStream serves both
		// halves of the answer; each scrape registers its own view of
		// them, so that scrapes running at once do not share one.
		sc := &scrapeCollector{collector: descs, c: m.src.Counters(), accs: m.src.AccountStatz(true), js: m.src.JetStream()}
		reg := prometheus.NewRegistry()
		reg.MustRegister(sc)
		families, err := prometheus.Gatherers{base, reg}.Gather()
		if err != nil {
			m.log.Warn("gather metrics", "err", err)
		}
		writeMetrics(w, r, families, func(e *exposition) {
			if sc.js != nil {
				writeObjects(e, sc.c.ServerID, sc.js)
			}
		})
	})
}

// globalAccount names the global account as the reference names it in
// the exporter's labels.
const globalAccount = "$G"

// Label sets of the server-wide series, as the exporter names them (the
// per-object ones are in writeObjects). Never a label per subject or per
// connection: the series grow with streams and consumers only.
var (
	serverLabels   = []string{"server_id"}
	jsServerLabels = []string{"server_id", "server_name"}
	// accountLabels are the exporter's on its per-account series
	// (-accstatz, and -jsz=accounts after jsServerLabels).
	accountLabels   = []string{"server_id", "account", "account_id", "account_name"}
	jsAccountLabels = []string{"server_id", "server_name", "account", "account_name", "account_id"}
)

// collector holds the descriptors of the server-wide series, fixed at
// construction; a scrapeCollector turns one snapshot into metrics.
type collector struct {
	info, uptime, connections, totalConnections, subscriptions *prometheus.Desc
	wsConnections, mqttConnections                             *prometheus.Desc
	inMsgs, outMsgs, inBytes, outBytes, slowConsumers          *prometheus.Desc
	authFailures, leafUp                                       *prometheus.Desc
	// The exporter's /varz gauges, for dashboards built on them.
	varz [8]*prometheus.Desc

	jsDisabled, jsStreams, jsConsumers, jsMessages, jsBytes *prometheus.Desc
	jsAPI, jsAPIErrors, jsDeadLettered, jsDeadLost          *prometheus.Desc
	jsDamaged, fsync, commit, storeFree, storeSize          *prometheus.Desc
	indexBytes, indexMax, indexLoads, indexEvictions        *prometheus.Desc
	openFiles, maxOpenFiles                                 *prometheus.Desc

	// Per account, under the exporter's names: its /accstatz numbers
	// and its JetStream usage and reservations.
	accStatz                                                   [8]*prometheus.Desc
	accJSMaxMemory, accJSMaxStorage, accJSMemory, accJSStorage *prometheus.Desc
}

func newCollector() *collector {
	d := func(name, help string, labels []string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, labels, nil)
	}
	c := &collector{}
	c.info = d("bus_info", "Always 1; the labels name the server and its version.", []string{"server_id", "server_name", "version"})
	c.uptime = d("bus_uptime_seconds", "Seconds since the server started.", serverLabels)
	c.connections = d("bus_connections", "Client connections open now.", serverLabels)
	c.wsConnections = d("bus_websocket_connections", "WebSocket client connections open now (counted in bus_connections too).", serverLabels)
	c.mqttConnections = d("bus_mqtt_connections", "MQTT client connections open now (counted in bus_connections too; over WebSocket also in bus_websocket_connections).", serverLabels)
	c.totalConnections = d("bus_connections_total", "Client connections accepted since the server started.", serverLabels)
	c.subscriptions = d("bus_subscriptions", "Client subscriptions now.", serverLabels)
	c.inMsgs = d("bus_in_messages_total", "Messages received from clients.", serverLabels)
	c.outMsgs = d("bus_out_messages_total", "Messages sent to clients.", serverLabels)
	c.inBytes = d("bus_in_bytes_total", "Payload bytes received from clients.", serverLabels)
	c.outBytes = d("bus_out_bytes_total", "Payload bytes sent to clients.", serverLabels)
	c.slowConsumers = d("bus_slow_consumers_total", "Connections closed as slow consumers.", serverLabels)
	c.authFailures = d("bus_auth_failures_total", "Connections refused for bad credentials or an authentication timeout.", serverLabels)
	c.leafUp = d("bus_leafnode_up", "1 while the leaf link to a remote (a hub) is up, 0 while bus dials it again.", []string{"server_id", "remote"})
	for i, name := range varzNames {
		c.varz[i] = d("gnatsd_varz_"+name, "/varz "+name+", as prometheus-nats-exporter names it.", serverLabels)
	}

	c.jsDisabled = d("jetstream_server_jetstream_disabled", "1 when JetStream is off.", jsServerLabels)
	c.jsStreams = d("jetstream_server_total_streams", "Streams.", jsServerLabels)
	c.jsConsumers = d("jetstream_server_total_consumers", "Consumers.", jsServerLabels)
	c.jsMessages = d("jetstream_server_total_messages", "Messages stored in every stream.", jsServerLabels)
	c.jsBytes = d("jetstream_server_total_message_bytes", "Bytes stored in every stream.", jsServerLabels)
	c.jsAPI = d("bus_jetstream_api_requests_total", "JetStream API requests.", jsServerLabels)
	c.jsAPIErrors = d("bus_jetstream_api_errors_total", "JetStream API requests answered with an error.", jsServerLabels)
	c.jsDeadLettered = d("bus_jetstream_dead_lettered_total", "Messages consumers gave up on (max deliveries or terminated), all consumers.", jsServerLabels)
	c.jsDeadLost = d("bus_jetstream_dead_letters_lost_total", "Dead letters that no stream stored.", jsServerLabels)
	c.jsDamaged = d("bus_jetstream_damaged_streams", "Streams found on disk that could not be opened.", jsServerLabels)
	c.fsync = d("bus_store_fsync_seconds", "Latency of each fsync of a stream's active segment, every stream.", jsServerLabels)
	c.commit = d("bus_store_commit_messages", "Messages written by each group commit, every stream.", jsServerLabels)
	c.storeFree = d("bus_store_free_bytes", "Bytes available to the server on the store's file system.", jsServerLabels)
	c.storeSize = d("bus_store_size_bytes", "Size of the store's file system.", jsServerLabels)
	c.indexBytes = d("bus_store_index_bytes", "Memory the per-message indexes of sealed segments hold now, every stream (an estimate).", jsServerLabels)
	c.indexMax = d("bus_store_index_max_bytes", "Bound of that memory (jetstream.max_index_memory).", jsServerLabels)
	c.indexLoads = d("bus_store_index_loads_total", "Segment indexes loaded into memory.", jsServerLabels)
	c.indexEvictions = d("bus_store_index_evictions_total", "Segment indexes dropped from memory, idle or over the bound.", jsServerLabels)
	c.openFiles = d("bus_store_open_files", "Segment and consumer journal files open now.", jsServerLabels)
	c.maxOpenFiles = d("bus_store_max_open_files", "Bound of the files open at once.", jsServerLabels)

	for i, name := range accStatzNames {
		c.accStatz[i] = d("gnatsd_accstatz_"+name, "/accstatz "+name+" of the account, as prometheus-nats-exporter names it.", accountLabels)
	}
	c.accJSMaxMemory = d("jetstream_account_max_memory", "Memory the account's JetStream reserves (its max_memory; 2^64-1 without).", jsAccountLabels)
	c.accJSMaxStorage = d("jetstream_account_max_storage", "Storage the account's JetStream reserves (its max_file; 2^64-1 without).", jsAccountLabels)
	c.accJSMemory = d("jetstream_account_memory_used", "Bytes of the account's memory streams.", jsAccountLabels)
	c.accJSStorage = d("jetstream_account_storage_used", "Bytes of the account's file streams.", jsAccountLabels)

	return c
}

// varzNames are the /varz keys whose gauges the exporter emits and bus
// has, in the order of varzValues.
var varzNames = [8]string{"connections", "total_connections", "subscriptions", "in_msgs", "out_msgs", "in_bytes", "out_bytes", "slow_consumers"}

// accStatzNames are the exporter's per-account series of /accstatz, in
// the order of accStatzValues.
var accStatzNames = [8]string{"current_connections", "total_connections", "subscriptions", "sent_messages", "sent_bytes", "received_messages", "received_bytes", "slow_consumers"}

// accStatzValues are the numbers named by accStatzNames, in that order.
func accStatzValues(a *AccountStat) [8]int64 {
	return [8]int64{int64(a.Conns), int64(a.TotalConns), int64(a.NumSubs), a.Sent.Msgs, a.Sent.Bytes, a.Received.Msgs, a.Received.Bytes, a.SlowConsumers}
}

// scrapeCollector is the prometheus.Collector of one scrape: the
// server's counters c and the JetStream snapshot js (nil without
// JetStream), both taken when the scrape began.
type scrapeCollector struct {
	*collector
	c    Counters
	accs *AccountStatz // every account, used or not
	js   *JetStreamMetrics
}

// Describe sends every descriptor.
func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{
		c.info, c.uptime, c.connections, c.wsConnections, c.mqttConnections, c.totalConnections, c.subscriptions,
		c.inMsgs, c.outMsgs, c.inBytes, c.outBytes, c.slowConsumers, c.authFailures, c.leafUp,
		c.jsDisabled, c.jsStreams, c.jsConsumers, c.jsMessages, c.jsBytes,
		c.jsAPI, c.jsAPIErrors, c.jsDeadLettered, c.jsDeadLost,
		c.jsDamaged, c.fsync, c.commit, c.storeFree, c.storeSize,
		c.indexBytes, c.indexMax, c.indexLoads, c.indexEvictions, c.openFiles, c.maxOpenFiles,
	} {
		ch <- d
	}
	for _, d := range c.varz {
		ch <- d
	}
	for _, d := range c.accStatz {
		ch <- d
	}
	for _, d := range []*prometheus.Desc{c.accJSMaxMemory, c.accJSMaxStorage, c.accJSMemory, c.accJSStorage} {
		ch <- d
	}
}

// varzValues are the counters named by varzNames, in that order.
func varzValues(c Counters) [8]int64 {
	return [8]int64{int64(c.Connections), c.TotalConnections, int64(c.Subscriptions), c.InMsgs, c.OutMsgs, c.InBytes, c.OutBytes, c.SlowConsumers}
}

// Collect sends the server's metrics and, with JetStream, every
// stream's and consumer's.
func (c *scrapeCollector) Collect(ch chan<- prometheus.Metric) {
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	id, name := c.c.ServerID, c.c.ServerName
	gauge(c.info, 1, id, name, c.c.Version)
	gauge(c.uptime, time.Since(c.c.Start).Seconds(), id)
	v := varzValues(c.c)
	gauge(c.connections, float64(v[0]), id)
	gauge(c.wsConnections, float64(c.c.WebSocketConnections), id)
	gauge(c.mqttConnections, float64(c.c.MQTTConnections), id)
	counter(c.totalConnections, float64(v[1]), id)
	gauge(c.subscriptions, float64(v[2]), id)
	counter(c.inMsgs, float64(v[3]), id)
	counter(c.outMsgs, float64(v[4]), id)
	counter(c.inBytes, float64(v[5]), id)
	counter(c.outBytes, float64(v[6]), id)
	counter(c.slowConsumers, float64(v[7]), id)
	counter(c.authFailures, float64(c.c.AuthFailures), id)
	for _, l := range c.c.Leafs {
		gauge(c.leafUp, boolGauge(l.Up), id, l.Remote)
	}
	for i, n := range v {
		gauge(c.varz[i], float64(n), id)
	}
	if c.accs != nil {
		for _, a := range c.accs.Accounts {
			for i, n := range accStatzValues(a) {
				gauge(c.accStatz[i], float64(n), id, a.Account, a.Account, a.Name)
			}
		}
	}
	m := c.js
	if m == nil {
		gauge(c.jsDisabled, 1, id, name)
		return
	}
	gauge(c.jsDisabled, 0, id, name)
	c.collectJetStream(ch, id, name, m)
}

// collectJetStream sends the JetStream series of one snapshot.
func (c *collector) collectJetStream(ch chan<- prometheus.Metric, id, name string, m *JetStreamMetrics) {
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	streams := accountStreams(m)
	var consumers int
	var msgs, bytes uint64
	for _, as := range streams {
		consumers += len(as.stream.Consumers)
		msgs += as.stream.Msgs
		bytes += as.stream.Bytes
	}
	for _, a := range m.Accounts {
		gauge(c.accJSMaxMemory, float64(a.ReservedMemory), id, name, a.Name, a.Name, a.Name)
		gauge(c.accJSMaxStorage, float64(a.ReservedStorage), id, name, a.Name, a.Name, a.Name)
		gauge(c.accJSMemory, float64(a.Memory), id, name, a.Name, a.Name, a.Name)
		gauge(c.accJSStorage, float64(a.Storage), id, name, a.Name, a.Name, a.Name)
	}
	gauge(c.jsStreams, float64(len(streams)), id, name)
	gauge(c.jsConsumers, float64(consumers), id, name)
	gauge(c.jsMessages, float64(msgs), id, name)
	gauge(c.jsBytes, float64(bytes), id, name)
	counter(c.jsAPI, float64(m.APITotal), id, name)
	counter(c.jsAPIErrors, float64(m.APIErrors), id, name)
	counter(c.jsDeadLettered, float64(m.DeadLettered), id, name)
	counter(c.jsDeadLost, float64(m.DeadLettersLost), id, name)
	gauge(c.jsDamaged, float64(m.Damaged), id, name)
	gauge(c.indexBytes, float64(m.IndexBytes), id, name)
	gauge(c.indexMax, float64(m.IndexMaxBytes), id, name)
	counter(c.indexLoads, float64(m.IndexLoads), id, name)
	counter(c.indexEvictions, float64(m.IndexEvictions), id, name)
	gauge(c.openFiles, float64(m.OpenFiles), id, name)
	gauge(c.maxOpenFiles, float64(m.MaxOpenFiles), id, name)
	ch <- constHistogram(c.fsync, m.SyncLatency, 1e-9, id, name)
	ch <- constHistogram(c.commit, m.CommitSizes, 1, id, name)
	if free, size, ok := storeSpace(m.StoreDir); ok {
		gauge(c.storeFree, float64(free), id, name)
		gauge(c.storeSize, float64(size), id, name)
	}
}

// age is the seconds from then to now, never negative; 0 unless known.
func age(now, then time.Time, known bool) float64 {
	if !known {
		return 0
	}
	return max(now.Sub(then).Seconds(), 0)
}

// constHistogram turns a histogram snapshot into a Prometheus one, scaling
// its bounds and sum (1e-9: nanoseconds to seconds).
func constHistogram(d *prometheus.Desc, h Histogram, scale float64, labels ...string) prometheus.Metric {
	buckets := make(map[float64]uint64, len(h.Bounds))
	var cum uint64
	for i, b := range h.Bounds {
		cum += h.Counts[i]
		buckets[float64(b)*scale] = cum
	}
	// Count, not the buckets' sum: the +Inf bucket is Count, and the
	// buckets must not exceed it (a snapshot is not atomic across them).
	count := max(h.Count, cum)
	return prometheus.MustNewConstHistogram(d, count, float64(h.Sum)*scale, buckets, labels...)
}

func boolGauge(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
