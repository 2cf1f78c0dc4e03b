package sys

import (
	"testing"

	"github.com/gofabric/fabric/provider"
)

func TestEventFDEpollPoll(t *testing.T) {
	ev, err := EventFDOpen()
	if err != nil {
		t.Fatal(err)
	}
	ep, err := EpollCreate()
	if err != nil {
		t.Fatal(err)
	}
	defer EpollClose(ep)
	if err := EpollAdd(ep, ev); err != nil {
		t.Fatal(err)
	}
	if err := EpollAdd(ep, ev); err == nil {
		t.Fatal("adding a descriptor twice succeeded")
	}
	if ok, err := PollReadable(ev, 0); ok || err != nil {
		t.Fatalf("fresh eventfd readable=%v err=%v", ok, err)
	}
	if n, err := EpollWait(ep, 0); n != 0 || err != nil {
		t.Fatalf("EpollWait on idle set = %d, %v", n, err)
	}
	for i := 0; i < 3; i++ {
		if err := EventFDSignal(ev); err != nil {
			t.Fatal(err)
		}
	}
	if ok, err := PollReadable(ev, 0); !ok || err != nil {
		t.Fatalf("signalled eventfd readable=%v err=%v", ok, err)
	}
	if ok, _ := PollReadable(ep, 100); !ok {
		t.Fatal("epoll fd not readable while a member is")
	}
	if n, err := EpollWait(ep, 100); n != 1 || err != nil {
		t.Fatalf("EpollWait = %d, %v", n, err)
	}
	if err := EventFDDrain(ev); err != nil {
		t.Fatal(err)
	}
	if err := EventFDDrain(ev); err != nil { // already empty: not an error
		t.Fatal(err)
	}
	if ok, _ := PollReadable(ep, 0); ok {
		t.Fatal("epoll fd readable after drain")
	}
	if err := EpollDel(ep, ev); err != nil {
		t.Fatal(err)
	}
	EventFDSignal(ev)
	if ok, _ := PollReadable(ep, 0); ok {
		t.Fatal("epoll fd readable after its member was removed")
	}
	if err := EventFDClose(ev); err != nil {
		t.Fatal(err)
	}
	if _, err := PollReadable(ev, 0); err != provider.EBADF {
		t.Fatalf("poll of a closed descriptor: %v, want EBADF", err)
	}
	if err := EventFDClose(ev); err != provider.EBADF {
		t.Fatalf("second close: %v, want EBADF", err)
	}
	if err := EpollDel(ep, 123456); err == nil {
		t.Fatal("EpollDel of an unknown descriptor succeeded")
	}
}
