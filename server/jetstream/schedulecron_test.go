package jetstream

import (
	"testing"
	"time"
)

func TestCronNext(t *testing.T) {
	t.Parallel()
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip("no time zone database:", err)
	}
	// 2025-03-14 is a Friday.
	from := time.Date(2025, 3, 14, 10, 20, 30, 500, time.UTC)
	for _, c := range []struct {
		name, pattern string
		loc           *time.Location
		want          time.Time
	}{
		{"every_second_is_the_next_whole_second", "* * * * * *", time.UTC, time.Date(2025, 3, 14, 10, 20, 31, 0, time.UTC)},
		{"question_mark_is_any", "? * * * * ?", time.UTC, time.Date(2025, 3, 14, 10, 20, 31, 0, time.UTC)},
		{"second_list", "0,45 * * * * *", time.UTC, time.Date(2025, 3, 14, 10, 20, 45, 0, time.UTC)},
		{"top_of_the_minute", "0 * * * * *", time.UTC, time.Date(2025, 3, 14, 10, 21, 0, 0, time.UTC)},
		{"step_over_all", "*/15 * * * * *", time.UTC, time.Date(2025, 3, 14, 10, 20, 45, 0, time.UTC)},
		{"start_with_step_runs_to_the_end", "10/20 * * * * *", time.UTC, time.Date(2025, 3, 14, 10, 20, 50, 0, time.UTC)},
		{"range_with_step", "0 0-30/10 * * * *", time.UTC, time.Date(2025, 3, 14, 10, 30, 0, 0, time.UTC)},
		{"hourly_wraps_the_hour", "0 0 * * * *", time.UTC, time.Date(2025, 3, 14, 11, 0, 0, 0, time.UTC)},
		{"daily_wraps_the_day", "0 0 0 * * *", time.UTC, time.Date(2025, 3, 15, 0, 0, 0, 0, time.UTC)},
		{"month_name", "0 0 0 1 apr *", time.UTC, time.Date(2025, 4, 1, 0, 0, 0, 0, time.UTC)},
		{"month_name_any_case", "0 0 0 1 JAN *", time.UTC, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"weekday_name", "0 0 9 * * mon", time.UTC, time.Date(2025, 3, 17, 9, 0, 0, 0, time.UTC)},
		{"weekday_range", "0 0 9 * * mon-fri", time.UTC, time.Date(2025, 3, 17, 9, 0, 0, 0, time.UTC)},
		{"both_days_restricted_means_either", "0 0 0 20 * sat", time.UTC, time.Date(2025, 3, 15, 0, 0, 0, 0, time.UTC)},
		{"day_any_with_weekday_means_both", "0 0 0 * * sun", time.UTC, time.Date(2025, 3, 16, 0, 0, 0, 0, time.UTC)},
		{"leap_day", "0 0 0 29 2 *", time.UTC, time.Date(2028, 2, 29, 0, 0, 0, 0, time.UTC)},
		{"empty_list_elements_are_skipped", "0,,30 * * * * *", time.UTC, time.Date(2025, 3, 14, 10, 21, 0, 0, time.UTC)},
		{"in_a_time_zone", "0 0 9 * * *", ny, time.Date(2025, 3, 14, 13, 0, 0, 0, time.UTC)},
		{"yearly_macro", "@yearly", time.UTC, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, ok := parseSchedulePattern(c.pattern, nil)
			if !ok {
				t.Fatalf("%q refused", c.pattern)
			}
			p.loc = c.loc
			got, repeats, ok := p.next(from, from)
			if !ok || !repeats || !got.Equal(c.want) {
				t.Errorf("%q after %v: %v (repeats %v, ok %v), want %v", c.pattern, from, got.UTC(), repeats, ok, c.want)
			}
		})
	}
}

func TestCronRefused(t *testing.T) {
	t.Parallel()
	for _, p := range []string{
		"", "* * * * *", "* * * * * * *", "60 * * * * *", "* 60 * * * *", "* * 24 * * *", "* * * 0 * *",
		"* * * 32 * *", "* * * * 0 *", "* * * * 13 *", "* * * * * 7", "1-2-3 * * * * *", "1/2/3 * * * * *",
		"*/0 * * * * *", "5-1 * * * * *", "-1 * * * * *", "x * * * * *", "* * * * jan-foo *", "* * * * * monday",
		"0 0 0 30 2 *", "0 0 0 31 4 *", "@reboot", "@every", "@every 999ms", "@every 1x", "@at never",
	} {
		if _, ok := parseSchedulePattern(p, nil); ok {
			if sp, _ := parseSchedulePattern(p, nil); sp.kind == scheduleCron {
				if _, err := sp.cron.next(time.Now(), time.UTC); err != nil {
					continue // parses, but never fires: refused when published
				}
			}
			t.Errorf("%q accepted", p)
		}
	}
}

func TestSchedulePatternNext(t *testing.T) {
	t.Parallel()
	stored := time.Date(2025, 3, 14, 10, 20, 30, 600_000_000, time.UTC)
	every, ok := parseSchedulePattern("@every 5s", nil)
	if !ok {
		t.Fatal("@every 5s refused")
	}
	// From a whole second (rounded) on.
	if got, repeats, _ := every.next(stored, stored); !repeats || !got.Equal(time.Date(2025, 3, 14, 10, 20, 36, 0, time.UTC)) {
		t.Errorf("@every 5s first: %v", got)
	}
	// Behind now (after a restart): once, then on from now.
	now := stored.Add(time.Hour)
	if got, _, _ := every.next(stored, now); !got.Equal(now.Round(time.Second).Add(5 * time.Second)) {
		t.Errorf("@every 5s behind: %v", got)
	}
	cron, _ := parseSchedulePattern("0 * * * * *", nil)
	if got, _, _ := cron.next(stored, now); !got.Equal(time.Date(2025, 3, 14, 11, 21, 0, 0, time.UTC)) {
		t.Errorf("cron behind: %v", got)
	}
	at, ok := parseSchedulePattern("@at 2025-03-14T10:00:00Z", nil)
	if got, repeats, _ := at.next(stored, now); !ok || repeats || !got.Equal(time.Date(2025, 3, 14, 10, 0, 0, 0, time.UTC)) {
		t.Errorf("@at: %v %v", got, repeats)
	}
	// A time zone is for cron only.
	for _, p := range []string{"@at 2025-03-14T10:00:00Z", "@every 1s"} {
		if _, ok := parseSchedulePattern(p, time.UTC); ok {
			t.Errorf("%q with a time zone accepted", p)
		}
	}
}
