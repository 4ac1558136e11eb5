package testprovider

import "testing"

// A thing is a file of the world dir, and only there: a name that would
// leave the dir is refused.
func TestThingsStayInTheWorld(t *testing.T) {
	dir := t.TempDir()
	if err := WriteThing(dir, "a", Thing{Value: "1", Secret: "s"}); err != nil {
		t.Fatal(err)
	}
	if th, ok, err := ReadThing(dir, "a"); err != nil || !ok || th != (Thing{Value: "1", Secret: "s"}) {
		t.Fatalf("read = %+v %v %v", th, ok, err)
	}
	if err := RemoveThing(dir, "a"); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := ReadThing(dir, "a"); ok || err != nil {
		t.Fatalf("removed thing: ok=%v err=%v", ok, err)
	}
	for _, name := range []string{"../escape", "a/b", ".hidden", ""} {
		if err := WriteThing(dir, name, Thing{}); err == nil {
			t.Errorf("name %q accepted", name)
		}
	}
	if err := WriteThing("", "a", Thing{}); err == nil {
		t.Error("a world without a dir accepted")
	}
}
