package jetstream

import (
	"slices"
	"testing"
)

func TestStreamFlow(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		cfg        streamConfig
		reads, pub []string
	}{
		{"plain capture makes the server do nothing", streamConfig{Subjects: []string{"a.>"}}, nil, nil},
		{"a transform reads what it applies to", streamConfig{Subjects: []string{"a.>", "b.>"},
			SubjectTransform: &subjectTransformConfig{Source: "a.x.>", Destination: "c.>"}}, []string{"a.x.>"}, nil},
		{"an empty transform source is everything", streamConfig{Subjects: []string{"a.>"},
			SubjectTransform: &subjectTransformConfig{Destination: "c.>"}}, []string{"a.>"}, nil},
		{"republish reads its source and publishes its reach", streamConfig{Subjects: []string{"a.>", "b.>"},
			RePublish: &rePublishConfig{Source: "a.*.>", Destination: "r.{{wildcard(1)}}.>"}}, []string{"a.*.>"}, []string{"r.*.>"}},
		{"republish of transformed subjects reads them before the transform", streamConfig{Subjects: []string{"a.>"},
			SubjectTransform: &subjectTransformConfig{Source: "a.>", Destination: "c.>"},
			RePublish:        &rePublishConfig{Source: "c.>", Destination: "r.>"}}, []string{"a.>"}, []string{"r.>"}},
	} {
		f := streamFlow(tc.cfg)
		if !slices.Equal(f.reads, tc.reads) || !slices.Equal(f.publishes, tc.pub) {
			t.Errorf("%s: reads %q publishes %q, want %q %q", tc.name, f.reads, f.publishes, tc.reads, tc.pub)
		}
	}
}

func TestHeldSubjectsFollowOrigins(t *testing.T) {
	t.Parallel()
	origins := map[string]*stream{
		"SECRET": {cfg: streamConfig{Name: "SECRET", Subjects: []string{"secret.>"}}},
		"M":      {cfg: streamConfig{Name: "M", Mirror: &sourceConfig{Name: "SECRET"}}},
		"LOOP":   {cfg: streamConfig{Name: "LOOP", Sources: []*sourceConfig{{Name: "LOOP"}}}},
	}
	sh := &shared{lookup: func(name string) *stream { return origins[name] }}
	for _, tc := range []struct {
		name string
		cfg  streamConfig
		want []string
	}{
		{"a mirror holds its origin's subjects", origins["M"].cfg, []string{"secret.>"}},
		{"a mirror of a mirror too", streamConfig{Mirror: &sourceConfig{Name: "M"}}, []string{"secret.>"}},
		{"a filtered source holds its filter", streamConfig{Sources: []*sourceConfig{{Name: "SECRET", FilterSubject: "secret.a"}}}, []string{"secret.a"}},
		{"a transformed source holds the transform's reach", streamConfig{Sources: []*sourceConfig{{Name: "SECRET",
			SubjectTransforms: []subjectTransformConfig{{Source: "secret.>", Destination: "pub.>"}}}}}, []string{"pub.>"}},
		{"a missing origin may hold anything", streamConfig{Sources: []*sourceConfig{{Name: "NONE"}}}, []string{">"}},
		{"a cycle reads as anything", origins["LOOP"].cfg, []string{">"}},
		{"an external origin may hold anything", streamConfig{Sources: []*sourceConfig{{Name: "SECRET", External: &externalStream{API: "$JS.hub.API"}}}}, []string{">"}},
	} {
		if got := sh.heldSubjects(tc.cfg, maxHeldDepth); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
