from django.db import migrations, models


class Migration(migrations.Migration):
    """Recommendation.engine_version (advisor.engine.ENGINE_VERSION); rows made before it say 0."""

    dependencies = [("advisor", "0006_time_model_validation")]
    operations = [
        migrations.AddField("recommendation", "engine_version", models.PositiveIntegerField(default=0)),
    ]
