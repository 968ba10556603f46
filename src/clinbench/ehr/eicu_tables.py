"""eICU-CRD tables (schema eicu_crd): official column names, order and types.

Declared once here and used by the loader, the synthetic generator and the fixtures.

Source: eicu-code's DuckDB build script for eICU-CRD v2.0
(`build-db/duckdb/duckdb_create_tables.sql`), all 31 official tables; names and order
checked against the headers of the official demo v2.0.1 files. Types map as INT ->
INTEGER, BIGINT / SMALLINT kept, NUMERIC / DOUBLE PRECISION -> DOUBLE, VARCHAR kept,
BOOLEAN kept. Columns the build script keeps as text stay VARCHAR even where the demo
happens to hold only numbers (``infusiondrug.drugrate`` holds 'ERROR' in the demo; the
other infusiondrug amounts, ``customlab.labotherresult``, the APACHE predicted
mortalities and the ``*time24`` clock times are text upstream): casting them at load
time could fail or silently change values on the full database, so concept SQL casts
them where it needs numbers.

Table names are lower case; the PhysioNet file names are camelCase
(``apacheApsVar.csv.gz`` -> ``eicu_crd.apacheapsvar``), kept in ``Table.source``.
"""

from clinbench.ehr.schema import Table, columns

EICU = "eicu_crd"


def _t(source: str, spec: str) -> Table:
    return Table(EICU, source.lower(), columns(spec), source=source)


EICU_TABLES: tuple[Table, ...] = (
    _t("admissiondrug", """
        admissiondrugid INTEGER, patientunitstayid INTEGER, drugoffset INTEGER,
        drugenteredoffset INTEGER, drugnotetype VARCHAR, specialtytype VARCHAR,
        usertype VARCHAR, rxincluded VARCHAR, writtenineicu VARCHAR, drugname VARCHAR,
        drugdosage DOUBLE, drugunit VARCHAR, drugadmitfrequency VARCHAR,
        drughiclseqno INTEGER"""),
    _t("admissionDx", """
        admissiondxid INTEGER, patientunitstayid INTEGER, admitdxenteredoffset INTEGER,
        admitdxpath VARCHAR, admitdxname VARCHAR, admitdxtext VARCHAR"""),
    _t("allergy", """
        allergyid INTEGER, patientunitstayid INTEGER, allergyoffset INTEGER,
        allergyenteredoffset INTEGER, allergynotetype VARCHAR, specialtytype VARCHAR,
        usertype VARCHAR, rxincluded VARCHAR, writtenineicu VARCHAR, drugname VARCHAR,
        allergytype VARCHAR, allergyname VARCHAR, drughiclseqno INTEGER"""),
    _t("apacheApsVar", """
        apacheapsvarid INTEGER, patientunitstayid INTEGER, intubated SMALLINT, vent SMALLINT,
        dialysis SMALLINT, eyes SMALLINT, motor SMALLINT, verbal SMALLINT, meds SMALLINT,
        urine DOUBLE, wbc DOUBLE, temperature DOUBLE, respiratoryrate DOUBLE, sodium DOUBLE,
        heartrate DOUBLE, meanbp DOUBLE, ph DOUBLE, hematocrit DOUBLE, creatinine DOUBLE,
        albumin DOUBLE, pao2 DOUBLE, pco2 DOUBLE, bun DOUBLE, glucose DOUBLE,
        bilirubin DOUBLE, fio2 DOUBLE"""),
    _t("apachePatientResult", """
        apachepatientresultsid INTEGER, patientunitstayid INTEGER,
        physicianspeciality VARCHAR, physicianinterventioncategory VARCHAR,
        acutephysiologyscore INTEGER, apachescore INTEGER, apacheversion VARCHAR,
        predictedicumortality VARCHAR, actualicumortality VARCHAR, predictediculos DOUBLE,
        actualiculos DOUBLE, predictedhospitalmortality VARCHAR,
        actualhospitalmortality VARCHAR, predictedhospitallos DOUBLE,
        actualhospitallos DOUBLE, preopmi INTEGER, preopcardiaccath INTEGER,
        ptcawithin24h INTEGER, unabridgedunitlos DOUBLE, unabridgedhosplos DOUBLE,
        actualventdays DOUBLE, predventdays DOUBLE, unabridgedactualventdays DOUBLE"""),
    _t("apachePredVar", """
        apachepredvarid INTEGER, patientunitstayid INTEGER, sicuday SMALLINT,
        saps3day1 SMALLINT, saps3today SMALLINT, saps3yesterday SMALLINT, gender SMALLINT,
        teachtype SMALLINT, region SMALLINT, bedcount SMALLINT, admitsource SMALLINT,
        graftcount SMALLINT, meds SMALLINT, verbal SMALLINT, motor SMALLINT, eyes SMALLINT,
        age SMALLINT, admitdiagnosis VARCHAR, thrombolytics SMALLINT, diedinhospital SMALLINT,
        aids SMALLINT, hepaticfailure SMALLINT, lymphoma SMALLINT, metastaticcancer SMALLINT,
        leukemia SMALLINT, immunosuppression SMALLINT, cirrhosis SMALLINT,
        electivesurgery SMALLINT, activetx SMALLINT, readmit SMALLINT, ima SMALLINT,
        midur SMALLINT, ventday1 SMALLINT, oobventday1 SMALLINT, oobintubday1 SMALLINT,
        diabetes SMALLINT, managementsystem SMALLINT, var03hspxlos DOUBLE, pao2 DOUBLE,
        fio2 DOUBLE, ejectfx DOUBLE, creatinine DOUBLE, dischargelocation SMALLINT,
        visitnumber SMALLINT, amilocation SMALLINT, day1meds SMALLINT, day1verbal SMALLINT,
        day1motor SMALLINT, day1eyes SMALLINT, day1pao2 DOUBLE, day1fio2 DOUBLE"""),
    _t("carePlanCareProvider", """
        cplcareprovderid INTEGER, patientunitstayid INTEGER, careprovidersaveoffset INTEGER,
        providertype VARCHAR, specialty VARCHAR, interventioncategory VARCHAR,
        managingphysician VARCHAR, activeupondischarge VARCHAR"""),
    _t("carePlanEOL", """
        cpleolid INTEGER, patientunitstayid INTEGER, cpleolsaveoffset INTEGER,
        cpleoldiscussionoffset INTEGER, activeupondischarge VARCHAR"""),
    _t("carePlanGeneral", """
        cplgeneralid INTEGER, patientunitstayid INTEGER, activeupondischarge VARCHAR,
        cplitemoffset INTEGER, cplgroup VARCHAR, cplitemvalue VARCHAR"""),
    _t("carePlanGoal", """
        cplgoalid INTEGER, patientunitstayid INTEGER, cplgoaloffset INTEGER,
        cplgoalcategory VARCHAR, cplgoalvalue VARCHAR, cplgoalstatus VARCHAR,
        activeupondischarge VARCHAR"""),
    _t("carePlanInfectiousDisease", """
        cplinfectid INTEGER, patientunitstayid INTEGER, activeupondischarge VARCHAR,
        cplinfectdiseaseoffset INTEGER, infectdiseasesite VARCHAR,
        infectdiseaseassessment VARCHAR, responsetotherapy VARCHAR, treatment VARCHAR"""),
    _t("customLab", """
        customlabid INTEGER, patientunitstayid INTEGER, labotheroffset INTEGER,
        labothertypeid INTEGER, labothername VARCHAR, labotherresult VARCHAR,
        labothervaluetext VARCHAR"""),
    _t("diagnosis", """
        diagnosisid INTEGER, patientunitstayid INTEGER, activeupondischarge VARCHAR,
        diagnosisoffset INTEGER, diagnosisstring VARCHAR, icd9code VARCHAR,
        diagnosispriority VARCHAR"""),
    _t("hospital", """
        hospitalid INTEGER, numbedscategory VARCHAR, teachingstatus BOOLEAN, region VARCHAR"""),
    _t("infusiondrug", """
        infusiondrugid INTEGER, patientunitstayid INTEGER, infusionoffset INTEGER,
        drugname VARCHAR, drugrate VARCHAR, infusionrate VARCHAR, drugamount VARCHAR,
        volumeoffluid VARCHAR, patientweight VARCHAR"""),
    _t("intakeOutput", """
        intakeoutputid INTEGER, patientunitstayid INTEGER, intakeoutputoffset INTEGER,
        intaketotal DOUBLE, outputtotal DOUBLE, dialysistotal DOUBLE, nettotal DOUBLE,
        intakeoutputentryoffset INTEGER, cellpath VARCHAR, celllabel VARCHAR,
        cellvaluenumeric DOUBLE, cellvaluetext VARCHAR"""),
    _t("lab", """
        labid INTEGER, patientunitstayid INTEGER, labresultoffset INTEGER,
        labtypeid SMALLINT, labname VARCHAR, labresult DOUBLE, labresulttext VARCHAR,
        labmeasurenamesystem VARCHAR, labmeasurenameinterface VARCHAR,
        labresultrevisedoffset INTEGER"""),
    _t("medication", """
        medicationid INTEGER, patientunitstayid INTEGER, drugorderoffset INTEGER,
        drugstartoffset INTEGER, drugivadmixture VARCHAR, drugordercancelled VARCHAR,
        drugname VARCHAR, drughiclseqno INTEGER, dosage VARCHAR, routeadmin VARCHAR,
        frequency VARCHAR, loadingdose VARCHAR, prn VARCHAR, drugstopoffset INTEGER,
        gtc INTEGER"""),
    _t("microLab", """
        microlabid INTEGER, patientunitstayid INTEGER, culturetakenoffset INTEGER,
        culturesite VARCHAR, organism VARCHAR, antibiotic VARCHAR, sensitivitylevel VARCHAR"""),
    _t("note", """
        noteid INTEGER, patientunitstayid INTEGER, noteoffset INTEGER,
        noteenteredoffset INTEGER, notetype VARCHAR, notepath VARCHAR, notevalue VARCHAR,
        notetext VARCHAR"""),
    _t("nurseAssessment", """
        nurseassessid INTEGER, patientunitstayid INTEGER, nurseassessoffset INTEGER,
        nurseassessentryoffset INTEGER, cellattributepath VARCHAR, celllabel VARCHAR,
        cellattribute VARCHAR, cellattributevalue VARCHAR"""),
    _t("nurseCare", """
        nursecareid INTEGER, patientunitstayid INTEGER, celllabel VARCHAR,
        nursecareoffset INTEGER, nursecareentryoffset INTEGER, cellattributepath VARCHAR,
        cellattribute VARCHAR, cellattributevalue VARCHAR"""),
    _t("nurseCharting", """
        nursingchartid BIGINT, patientunitstayid INTEGER, nursingchartoffset INTEGER,
        nursingchartentryoffset INTEGER, nursingchartcelltypecat VARCHAR,
        nursingchartcelltypevallabel VARCHAR, nursingchartcelltypevalname VARCHAR,
        nursingchartvalue VARCHAR"""),
    _t("pastHistory", """
        pasthistoryid INTEGER, patientunitstayid INTEGER, pasthistoryoffset INTEGER,
        pasthistoryenteredoffset INTEGER, pasthistorynotetype VARCHAR,
        pasthistorypath VARCHAR, pasthistoryvalue VARCHAR, pasthistoryvaluetext VARCHAR"""),
    _t("patient", """
        patientunitstayid INTEGER, patienthealthsystemstayid INTEGER, gender VARCHAR,
        age VARCHAR, ethnicity VARCHAR, hospitalid INTEGER, wardid INTEGER,
        apacheadmissiondx VARCHAR, admissionheight DOUBLE, hospitaladmittime24 VARCHAR,
        hospitaladmitoffset INTEGER, hospitaladmitsource VARCHAR,
        hospitaldischargeyear SMALLINT, hospitaldischargetime24 VARCHAR,
        hospitaldischargeoffset INTEGER, hospitaldischargelocation VARCHAR,
        hospitaldischargestatus VARCHAR, unittype VARCHAR, unitadmittime24 VARCHAR,
        unitadmitsource VARCHAR, unitvisitnumber INTEGER, unitstaytype VARCHAR,
        admissionweight DOUBLE, dischargeweight DOUBLE, unitdischargetime24 VARCHAR,
        unitdischargeoffset INTEGER, unitdischargelocation VARCHAR,
        unitdischargestatus VARCHAR, uniquepid VARCHAR"""),
    _t("physicalExam", """
        physicalexamid INTEGER, patientunitstayid INTEGER, physicalexamoffset INTEGER,
        physicalexampath VARCHAR, physicalexamvalue VARCHAR, physicalexamtext VARCHAR"""),
    _t("respiratoryCare", """
        respcareid INTEGER, patientunitstayid INTEGER, respcarestatusoffset INTEGER,
        currenthistoryseqnum INTEGER, airwaytype VARCHAR, airwaysize VARCHAR,
        airwayposition VARCHAR, cuffpressure DOUBLE, ventstartoffset INTEGER,
        ventendoffset INTEGER, priorventstartoffset INTEGER, priorventendoffset INTEGER,
        apneaparams VARCHAR, lowexhmvlimit DOUBLE, hiexhmvlimit DOUBLE, lowexhtvlimit DOUBLE,
        hipeakpreslimit DOUBLE, lowpeakpreslimit DOUBLE, hirespratelimit DOUBLE,
        lowrespratelimit DOUBLE, sighpreslimit DOUBLE, lowironoxlimit DOUBLE,
        highironoxlimit DOUBLE, meanairwaypreslimit DOUBLE, peeplimit DOUBLE,
        cpaplimit DOUBLE, setapneainterval VARCHAR, setapneatv VARCHAR,
        setapneaippeephigh VARCHAR, setapnearr VARCHAR, setapneapeakflow VARCHAR,
        setapneainsptime VARCHAR, setapneaie VARCHAR, setapneafio2 VARCHAR"""),
    _t("respiratoryCharting", """
        respchartid INTEGER, patientunitstayid INTEGER, respchartoffset INTEGER,
        respchartentryoffset INTEGER, respcharttypecat VARCHAR, respchartvaluelabel VARCHAR,
        respchartvalue VARCHAR"""),
    _t("treatment", """
        treatmentid INTEGER, patientunitstayid INTEGER, treatmentoffset INTEGER,
        treatmentstring VARCHAR, activeupondischarge VARCHAR"""),
    _t("vitalAperiodic", """
        vitalaperiodicid INTEGER, patientunitstayid INTEGER, observationoffset INTEGER,
        noninvasivesystolic DOUBLE, noninvasivediastolic DOUBLE, noninvasivemean DOUBLE,
        paop DOUBLE, cardiacoutput DOUBLE, cardiacinput DOUBLE, svr DOUBLE, svri DOUBLE,
        pvr DOUBLE, pvri DOUBLE"""),
    _t("vitalPeriodic", """
        vitalperiodicid BIGINT, patientunitstayid INTEGER, observationoffset INTEGER,
        temperature DOUBLE, sao2 INTEGER, heartrate INTEGER, respiration INTEGER, cvp INTEGER,
        etco2 INTEGER, systemicsystolic INTEGER, systemicdiastolic INTEGER,
        systemicmean INTEGER, pasystolic INTEGER, padiastolic INTEGER, pamean INTEGER,
        st1 DOUBLE, st2 DOUBLE, st3 DOUBLE, icp INTEGER"""),
)
