package testprovider

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// thing is the world_thing resource: a file named after it in the world.
type thing struct{ world world }

type thingModel struct {
	ID           types.String `tfsdk:"id"`
	Name         types.String `tfsdk:"name"`
	Value        types.String `tfsdk:"value"`
	Secret       types.String `tfsdk:"secret"`
	ApplyDelayMS types.Int64  `tfsdk:"apply_delay_ms"`
	FailOnApply  types.Bool   `tfsdk:"fail_on_apply"`
}

func newThing() resource.Resource { return &thing{} }

var (
	_ resource.ResourceWithConfigure   = (*thing)(nil)
	_ resource.ResourceWithImportState = (*thing)(nil)
)

func (r *thing) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_thing"
}

func (r *thing) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "A thing of the world: a file in the provider's dir.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed:      true,
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"name": schema.StringAttribute{
				Required:      true,
				Description:   "The thing's file name in the world, without .json.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"value": schema.StringAttribute{Required: true},
			"secret": schema.StringAttribute{
				Optional:  true,
				Sensitive: true,
			},
			"apply_delay_ms": schema.Int64Attribute{
				Optional:    true,
				Description: "How long creating, updating or deleting the thing takes.",
			},
			"fail_on_apply": schema.BoolAttribute{
				Optional:    true,
				Description: "Creating or updating the thing fails, after the delay.",
			},
		},
	}
}

func (r *thing) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	if w, ok := req.ProviderData.(world); ok {
		r.world = w
	}
}

func (r *thing) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var m thingModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() || !r.apply(ctx, m, &resp.Diagnostics) {
		return
	}
	m.ID = m.Name
	resp.Diagnostics.Append(resp.State.Set(ctx, m)...)
}

func (r *thing) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var m thingModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() || !r.apply(ctx, m, &resp.Diagnostics) {
		return
	}
	m.ID = m.Name
	resp.Diagnostics.Append(resp.State.Set(ctx, m)...)
}

// apply waits the thing's delay, then fails as told or writes the thing.
func (r *thing) apply(ctx context.Context, m thingModel, diags *diag.Diagnostics) bool {
	name := m.Name.ValueString()
	if err := wait(ctx, m.ApplyDelayMS); err != nil {
		diags.AddError("world_thing "+name+": interrupted", err.Error())
		return false
	}
	if m.FailOnApply.ValueBool() {
		diags.AddError("world_thing "+name+": failing on apply as told", "fail_on_apply is true: the world refuses the thing.")
		return false
	}
	th := Thing{Value: m.Value.ValueString(), Secret: m.Secret.ValueString()}
	if err := WriteThing(r.world.dir, name, th); err != nil {
		diags.AddError("world_thing "+name+": cannot write the thing", err.Error())
		return false
	}
	return true
}

// Read returns the thing as the world has it now: a changed file is drift,
// a removed one a thing to create again.
func (r *thing) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var m thingModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	th, ok, err := ReadThing(r.world.dir, m.Name.ValueString())
	if err != nil {
		resp.Diagnostics.AddError("world_thing "+m.Name.ValueString()+": cannot read the thing", err.Error())
		return
	}
	if !ok {
		resp.State.RemoveResource(ctx)
		return
	}
	m.Value = types.StringValue(th.Value)
	if th.Secret != "" || !m.Secret.IsNull() {
		m.Secret = types.StringValue(th.Secret)
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, m)...)
}

func (r *thing) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var m thingModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if err := wait(ctx, m.ApplyDelayMS); err != nil {
		resp.Diagnostics.AddError("world_thing "+m.Name.ValueString()+": interrupted", err.Error())
		return
	}
	if err := RemoveThing(r.world.dir, m.Name.ValueString()); err != nil {
		resp.Diagnostics.AddError("world_thing "+m.Name.ValueString()+": cannot remove the thing", err.Error())
	}
}

// ImportState takes the name as the id: `terraform import world_thing.x NAME`.
func (r *thing) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("name"), req.ID)...)
}

// wait sleeps ms milliseconds, unless ctx ends first.
func wait(ctx context.Context, ms types.Int64) error {
	d := time.Duration(ms.ValueInt64()) * time.Millisecond
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("stopped after less than %s: %w", d, ctx.Err())
	}
}
