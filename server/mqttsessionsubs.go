package server

import "fmt"

// A session's subscriptions: what SUBSCRIBE and UNSUBSCRIBE change in
// the JetStream-kept session (consumers for QoS 1 filters, the record),
// and their restoring at a CONNECT that resumes the session.

// mqttSessionSubscribe gives filter (the sid) at QoS granted its
// consumers, one on subject and, for "a/#", one on its parent level
// (subject[:parent]), or removes them at QoS 0, and saves the record if
// it changed.
func (c *conn) mqttSessionSubscribe(st *mqttStored, filter, subject string, parent int, granted byte) error {
	sids := []string{filter}
	subjects := []string{subject}
	if parent > 0 {
		sids = append(sids, filter+mqttParentSID)
		subjects = append(subjects, subject[:parent])
	}
	changed := false
	for i, sid := range sids {
		if granted == 0 {
			changed = c.mqttDropConsumer(st, sid) || changed
			continue
		}
		ch, err := c.mqttBindConsumer(st, sid, subjects[i])
		if err != nil {
			for _, bound := range sids[:i] {
				c.mqttDropConsumer(st, bound)
			}
			return fmt.Errorf("mqtt: consumer for %q: %w", filter, err)
		}
		changed = changed || ch
	}
	st.mu.Lock()
	if q, ok := st.subs[filter]; !ok || q != granted {
		if st.subs == nil {
			st.subs = map[string]byte{}
		}
		st.subs[filter] = granted
		changed = true
	}
	keep := st.keepsRecord()
	st.mu.Unlock()
	if changed && keep {
		return st.save()
	}
	return nil
}

// mqttSessionUnsubscribe removes filter from the session: its consumers
// and its entry in the record.
func (c *conn) mqttSessionUnsubscribe(st *mqttStored, filter string) {
	changed := c.mqttDropConsumer(st, filter)
	changed = c.mqttDropConsumer(st, filter+mqttParentSID) || changed
	st.mu.Lock()
	if _, ok := st.subs[filter]; ok {
		delete(st.subs, filter)
		changed = true
	}
	keep := st.keepsRecord()
	st.mu.Unlock()
	if changed && keep {
		if err := st.save(); err != nil {
			c.log.Warn("mqtt session not saved", "client_id", st.id, "err", err)
		}
	}
}

// keepsRecord says the session is stored: a persistent one always, a
// clean one once it has had consumers. st.mu held.
func (st *mqttStored) keepsRecord() bool {
	return !st.clean || len(st.cons) > 0 || st.seq != 0
}

// mqttRestoreSession subscribes again to a resumed session's filters,
// after CONNACK, and has what the last connection left unacknowledged
// sent again. A filter the user may no longer subscribe to is dropped
// from the session.
func (c *conn) mqttRestoreSession(st *mqttStored) {
	st.mu.Lock()
	filters := make(map[string]byte, len(st.subs))
	for f, q := range st.subs {
		filters[f] = q
	}
	st.mu.Unlock()
	for f, q := range filters {
		if code := c.mqttAddFilter([]byte(f), q); code > 2 {
			c.log.Warn("mqtt session subscription not restored", "client_id", st.id, "filter", f)
			c.mqttSessionUnsubscribe(st, f)
		}
	}
	st.mqttResend()
}
