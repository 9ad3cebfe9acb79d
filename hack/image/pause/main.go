// Command pause is the sandbox container of every pod on the testbed's real nodes (docs/testbed.md "Data path"): it
// holds the pod's namespaces open, reaps zombies when it is PID 1 of a shared PID namespace, and exits on SIGINT or
// SIGTERM. No image registry is reachable here, so the runtime's usual pause image cannot be pulled.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	signals := make(chan os.Signal, 8)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range signals {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			var status syscall.WaitStatus
			if pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil); pid <= 0 || err != nil {
				break
			}
		}
	}
}
