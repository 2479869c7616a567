from django.db import migrations, models


class Migration(migrations.Migration):
    """A probe's work plan and progress marks (advisor/forecasts.py)."""

    dependencies = [("probe", "0001_initial")]
    operations = [
        migrations.AddField("probejob", "marks", models.JSONField(blank=True, default=list)),
        migrations.AddField("probejob", "work_plan", models.JSONField(blank=True, null=True)),
    ]
