from django.db import migrations, models


class Migration(migrations.Migration):
    """TimeModel.validation: the learned correction's validation ({} in models fitted before it)."""

    dependencies = [("advisor", "0005_fair_share_drain_forecasts_notifications")]
    operations = [
        migrations.AddField("timemodel", "validation", models.JSONField(blank=True, default=dict)),
    ]
