import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    """The probe whose next step a probe runs (issue 25 item 4)."""

    dependencies = [("probe", "0002_job_work_plan_and_marks")]
    operations = [
        migrations.AddField(
            model_name="probejob",
            name="previous",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="next_probes",
                to="probe.probejob",
            ),
        ),
    ]
