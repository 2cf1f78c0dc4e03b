package main

import (
	"context"
	"strconv"
	"testing"
	"time"
)

// TestLNX: two fi_pingpong processes over the lnx provider, untagged and
// tagged, with data checks, over the shm path (one host) and over the tcp
// path (FI_LNX_DISABLE_SHM).
func TestLNX(t *testing.T) {
	for _, c := range []struct {
		name, mode string
		env        []string
	}{
		{"shm_path_msg", "msg", nil},
		{"shm_path_tagged", "tagged", nil},
		{"tcp_path_tagged", "tagged", []string{"FI_LNX_DISABLE_SHM=1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			port := freePort(t)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			args := []string{"-p", "lnx", "-e", "rdm", "-m", c.mode, "-S", "all", "-I", "5", "-c", "--timeout", "10"}
			server := ourCommand(ctx, append(args, "-B", strconv.Itoa(port))...)
			client := ourCommand(ctx, append(args, "-P", strconv.Itoa(port), "127.0.0.1")...)
			server.Env = append(server.Env, c.env...)
			client.Env = append(client.Env, c.env...)
			r := runPair(t, ctx, port, server, client)
			if r.serverErr != nil || r.clientErr != nil {
				t.Fatalf("server: %v\n%s%s\nclient: %v\n%s%s", r.serverErr, r.serverOut, r.serverLog,
					r.clientErr, r.clientOut, r.clientLog)
			}
			checkTable(t, "client", r.clientOut, expectedRows(interopSizes("lnx", "all"), 5))
		})
	}
}
