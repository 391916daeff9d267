package server

// subscribeInternal registers a server-owned subscription whose messages
// go to h. It is how the JetStream layer hears API requests, captures
// stream subjects and receives acks.
func (s *Server) subscribeInternal(subject string, h msgHandler) (*subscription, error) {
	sub := &subscription{subject: subject, handler: h}
	if err := s.subs.Insert(subject, "", sub); err != nil {
		return nil, err
	}
	return sub, nil
}

func (s *Server) unsubscribeInternal(sub *subscription) {
	_ = s.subs.Remove(sub.subject, sub.queue, sub)
}

// sendInternal publishes a message from the server itself. hdr is a NATS
// header block or nil.
func (s *Server) sendInternal(subject, reply string, hdr, data []byte) int {
	hdrLen := -1
	msg := data
	if hdr != nil {
		hdrLen = len(hdr)
		msg = make([]byte, 0, len(hdr)+len(data))
		msg = append(append(msg, hdr...), data...)
	}
	return s.route(nil, []byte(subject), []byte(subject), []byte(reply), hdrLen, msg)
}

// deliverInternal sends a stored message to the subscribers of inbox,
// showing its own subject.
func (s *Server) deliverInternal(inbox, subject, reply string, hdr, data []byte) int {
	hdrLen := -1
	msg := data
	if len(hdr) > 0 {
		hdrLen = len(hdr)
		msg = make([]byte, 0, len(hdr)+len(data))
		msg = append(append(msg, hdr...), data...)
	}
	return s.route(nil, []byte(inbox), []byte(subject), []byte(reply), hdrLen, msg)
}

// hasInterest reports whether anything would receive a message on subject.
func (s *Server) hasInterest(subject string) bool {
	return !s.subs.MatchString(subject).Empty()
}
