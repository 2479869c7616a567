from django.db import migrations


class Migration(migrations.Migration):
    """The model of a stored measured configuration gets a name of its own: `Measurement` names the
    contract's type (advisor.contract.Measurement), which its `result` holds."""

    dependencies = [
        ("advisor", "0008_device_profile_history"),
    ]

    operations = [
        migrations.RenameModel(old_name="Measurement", new_name="MeasuredConfiguration"),
    ]
