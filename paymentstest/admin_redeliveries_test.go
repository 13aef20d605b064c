package paymentstest_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsapi/payments-go/paymentstest"
)

type redeliveriesData struct {
	LastSeq      int64 `json:"last_seq"`
	Redeliveries []struct {
		Seq     int64           `json:"seq"`
		EventID string          `json:"event_id"`
		URL     string          `json:"url"`
		ToHooks bool            `json:"to_webhook_url"`
		Body    json.RawMessage `json:"body"`
	} `json:"redeliveries"`
}

func TestAdminRedeliveriesLog(t *testing.T) {
	rc := newReceiver(t, nil)
	srv, c := start(t, append(fastHooks(rc.URL), paymentstest.WithAdminAPI(),
		paymentstest.WithDeliveryChaos(paymentstest.DeliveryChaos{Duplicate: true}))...)
	_, err := c.VirtualAccounts.Create(ctx(t), vaParams())
	require.NoError(t, err)
	waitDeliveries(t, srv)
	read := func(query string) redeliveriesData {
		r := send(t, srv, http.MethodGet, "/_sandbox/redeliveries"+query, "", nil)
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		var d redeliveriesData
		require.NoError(t, json.Unmarshal(r.env.Data, &d))
		return d
	}
	assert.Equal(t, redeliveriesData{LastSeq: 0, Redeliveries: nil}, stripEmpty(read("")), "the chaos duplicate is no redelivery asked for")

	ev := srv.Events()[0]
	_, err = srv.Redeliver(ev.ID)
	require.NoError(t, err)
	_, err = srv.RedeliverTo(ev.ID, "http://127.0.0.1:1/other")
	require.NoError(t, err)
	d := read("?after=0")
	assert.Equal(t, int64(2), d.LastSeq)
	require.Len(t, d.Redeliveries, 2)
	assert.Equal(t, ev.ID, d.Redeliveries[0].EventID)
	assert.Equal(t, rc.URL, d.Redeliveries[0].URL)
	assert.JSONEq(t, string(ev.Body), string(d.Redeliveries[0].Body))
	assert.True(t, d.Redeliveries[0].ToHooks)
	assert.Equal(t, "http://127.0.0.1:1/other", d.Redeliveries[1].URL)
	assert.False(t, d.Redeliveries[1].ToHooks)
	assert.Len(t, read("?after=1").Redeliveries, 1)
	assert.Empty(t, read("").Redeliveries, "without after: only where to start")

	bad := send(t, srv, http.MethodGet, "/_sandbox/redeliveries?after=x", "", nil)
	assert.Equal(t, http.StatusUnprocessableEntity, bad.status)
	assert.Equal(t, []string{"after"}, bad.fields())
}

func stripEmpty(d redeliveriesData) redeliveriesData {
	if len(d.Redeliveries) == 0 {
		d.Redeliveries = nil
	}
	return d
}
