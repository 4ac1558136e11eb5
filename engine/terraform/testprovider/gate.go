package testprovider

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// GateSuffix ends the name of a gate's file in the world dir.
const GateSuffix = ".gate"

// gate is the world_gate data source: reading it waits until the world
// holds the gate's file (OpenGate), so a test holds a plan mid-run, after
// Terraform printed its first lines, for as long as it needs.
type gate struct{ world world }

type gateModel struct {
	Name types.String `tfsdk:"name"`
}

func newGate() datasource.DataSource { return &gate{} }

var _ datasource.DataSourceWithConfigure = (*gate)(nil)

func (g *gate) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_gate"
}

func (g *gate) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "Reading it waits until the world dir holds NAME" + GateSuffix + ".",
		Attributes: map[string]schema.Attribute{
			"name": schema.StringAttribute{Required: true},
		},
	}
}

func (g *gate) Configure(_ context.Context, req datasource.ConfigureRequest, _ *datasource.ConfigureResponse) {
	if w, ok := req.ProviderData.(world); ok {
		g.world = w
	}
}

func (g *gate) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m gateModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	p, err := thingPath(g.world.dir, m.Name.ValueString())
	if err != nil {
		resp.Diagnostics.AddError("world_gate: "+m.Name.ValueString(), err.Error())
		return
	}
	p = p[:len(p)-len(filepath.Ext(p))] + GateSuffix
	// The provider runs in Terraform's sandbox: a file in the world is what
	// it can see of the test.
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if _, err := os.Stat(p); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			resp.Diagnostics.AddError("world_gate: "+m.Name.ValueString(), err.Error())
			return
		}
		select {
		case <-ctx.Done():
			resp.Diagnostics.AddError("world_gate "+m.Name.ValueString()+": interrupted", ctx.Err().Error())
			return
		case <-tick.C:
		}
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, m)...)
}
